"""A job in which rank 1 fails (``die``: exits at once, ``raise``: an uncaught exception,
``hang``: never joins the next collective) while rank 0 waits in a collective: the job must
end, with an error that says what happened, within the group's timeout (4 s here)."""
import datetime
import os
import sys
import time

import leafgrad as lg
import leafgrad.distributed as dist

dist.init_process_group(timeout=datetime.timedelta(seconds=4))
rank = dist.get_rank()
t = lg.ones(3)
dist.all_reduce(t)
if rank == 1:
    case = sys.argv[1]
    if case == 'die':
        os._exit(3)
    if case == 'raise':
        raise ValueError('rank 1 failed on purpose')
    if case == 'hang':
        time.sleep(60)
dist.all_reduce(t)
print(f'rank {rank} finished, which it should not have', flush=True)
