package io.strata.fuse;

/**
 * The process a FUSE request comes from, as the kernel reports it: files and directories it
 * creates are owned by this user and group.
 */
record Caller(long uid, long gid) {}
