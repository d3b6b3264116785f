"""The part of the sandbox that runs inside it. It is copied to a private folder and imported
from there as ``inside``, so that nothing else of the kit is importable by student code."""
