"""Two graders on one host never share a job's user id (sandbox.client.UidClaims).

Without bubblewrap, a root grader runs each concurrent job as a user id of its own, and the
zygote kills every process of that user before a job starts. Two graders that both took the
first free id would each kill the other's jobs, which is what two Gradescope runs side by side
did to each other (docs/security.md)."""

import multiprocessing
import os

from kit_autograder.sandbox import host
from kit_autograder.sandbox.client import UidClaims


def test_two_claims_get_different_ids():
    first, second = UidClaims(), UidClaims()
    try:
        mine, theirs = first.claim(2), second.claim(2)
        assert not set(mine) & set(theirs)
        assert min(mine) >= host.JOB_UID_BASE and min(theirs) >= host.JOB_UID_BASE
    finally:
        first.release()
        second.release()


def test_control_released_ids_are_the_first_free_ones_again():
    # What every grader took before the claim: the first free ids. Released, they are free.
    first = UidClaims()
    ids = first.claim(2)
    first.release()
    again = UidClaims()
    try:
        assert again.claim(2) == ids
    finally:
        again.release()


def _hold(ids, ready, done):
    claims = UidClaims()
    ids.extend(claims.claim(1))
    ready.set()
    done.wait(30)


def test_a_claim_held_by_another_process_is_skipped_and_dropped_when_it_dies():
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        ids, ready, done = manager.list(), manager.Event(), manager.Event()
        holder = context.Process(target=_hold, args=(ids, ready, done))
        holder.start()
        try:
            assert ready.wait(30)
            claims = UidClaims()
            assert ids[0] not in claims.claim(1)
            claims.release()
        finally:
            os.kill(holder.pid, 9)  # however the holder dies, the kernel drops its lock
            holder.join()
        claims = UidClaims()
        try:
            assert claims.claim(1) == [ids[0]]
        finally:
            claims.release()
