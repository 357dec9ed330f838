/*
 * pidlock.h - a lock between processes that share memory, holding its
 * holder's pid (0 = free). A process can be killed at any instruction
 * (contract 5), holding the lock included: a waiter that finds the holder
 * gone (kill(pid, 0) fails with ESRCH once the master reaped it) takes the
 * lock over. What the dead holder left half written must be safe by design
 * of the data it guards (each user's banner says how).
 */
#ifndef ATTIC_PIDLOCK_H
#define ATTIC_PIDLOCK_H

#include <stdatomic.h>
#include <stdint.h>

/* Take the lock at *pid (spinning, then sleeping 50 us between tries).
 * Critical sections are short copies, never blocking calls. */
void pidlock_take(_Atomic int32_t *pid);
void pidlock_release(_Atomic int32_t *pid);

#endif
