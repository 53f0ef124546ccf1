"""Cook: jobs and projection, compile backends, the scheduler, and the outputs (manifest, pak, atomic writes)."""
