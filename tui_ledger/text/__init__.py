"""How text reads: numbers, wording, terminal-safe text, labels that stay apart, columns as text."""
