"""What the tests share: fakes, polling, module runners, fixtures and generated test data (docs/developing.md,
"The test toolkit")."""
