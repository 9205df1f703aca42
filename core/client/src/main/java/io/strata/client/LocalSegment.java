package io.strata.client;

import java.nio.file.Path;

/**
 * A range of a file's bytes as they lie in a worker's block file on this machine ({@link
 * FileInStream#localSegment}).
 *
 * @param blockFile the block file
 * @param offset where the range starts in the block file
 * @param length bytes in the range
 */
public record LocalSegment(Path blockFile, long offset, long length) {}
