package io.strata.underfs;

/**
 * What an under store says of one path.
 *
 * @param name last path component
 * @param directory whether the path is a directory (or a common prefix in object stores)
 * @param length bytes; 0 for directories
 * @param modificationTimeMs last modification time, milliseconds since the epoch
 * @param mode POSIX permission bits, or 0 when the store has none
 * @param owner owner name, or "" when the store has none
 * @param group group name, or "" when the store has none
 * @param fingerprint text that changes whenever the content changes (length and mtime, an ETag,
 *     a checksum); used to notice files changed behind Strata's back
 */
public record UfsStatus(String name, boolean directory, long length, long modificationTimeMs,
    int mode, String owner, String group, String fingerprint) {}
