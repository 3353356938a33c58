"""An in-memory stand-in for diskcache.Cache: the original writes every answer to it and, in the
calls the dialogue and judge scripts make, never reads one back (use_caching=False)."""


class Cache(dict):
    def __init__(self, directory=None, **kwargs):
        super().__init__()
