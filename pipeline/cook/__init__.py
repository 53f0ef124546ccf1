"""Cook: the orchestrator that runs the stages in order (keys, plan, compile, outputs), its dry run, no-op fast path and verify."""
