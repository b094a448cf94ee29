"""The SDK's version, sent in the user-agent header."""

__version__ = "0.1.0"
