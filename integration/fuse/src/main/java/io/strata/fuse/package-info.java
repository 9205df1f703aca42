/** A FUSE mount of the Strata namespace over jnr-fuse and libfuse 2. */
package io.strata.fuse;
