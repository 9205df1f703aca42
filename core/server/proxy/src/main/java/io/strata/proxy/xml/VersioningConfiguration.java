package io.strata.proxy.xml;

/**
 * The body of PutBucketVersioning.
 *
 * @param status {@code Enabled} or {@code Suspended}
 * @param mfaDelete {@code Enabled}, {@code Disabled}, or empty when not given
 */
public record VersioningConfiguration(String status, String mfaDelete) {}
