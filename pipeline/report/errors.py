"""The report's user errors."""

from __future__ import annotations

from pipeline.errors import PipelineError


class ReportError(PipelineError):
    """A report option or input is invalid (a what-if, an --since file)."""
