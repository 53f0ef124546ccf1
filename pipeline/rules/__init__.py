"""Rule sets: models, YAML with locations, the safe expression language, compiled form, lint, counts."""
