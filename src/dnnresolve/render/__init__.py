"""Output: each result type has a module here that writes it as JSON, or as text through a writer (plain text,
or rich on a terminal: ``console.writer``). Nothing else prints."""
