"""Output: each result type has a module here that writes it as text (rich) or JSON. Nothing else prints."""
