"""The sandbox: the only code that starts student code.

* ``host.py`` finds out what the host allows (bubblewrap, root, namespaces, Landlock);
* ``client.py`` is the grader's side: it starts the zygote and talks to its jobs, reading only
  plain data, with limits and deadlines;
* ``inside/`` runs in the sandbox, standard library plus numpy, matplotlib and IPython only:
  ``zygote.py`` forks the jobs, ``confine.py`` confines each one, ``notebook.py`` runs the
  cells, ``calls.py`` answers the grader's calls, ``wire.py`` is the message format both sides
  share, ``landlock.py`` and ``seccomp.py`` are the kernel's own walls.
"""
