package io.strata.proxy.s3;

import io.strata.client.FileSystem;
import io.strata.proxy.access.AccessControl;
import io.strata.proxy.access.UserGroups;
import java.time.Duration;

/**
 * What every S3 operation shares: the cluster client, where buckets live, the access checks, the
 * per-key write locks and the proxy's settings.
 *
 * @param statuses objects' statuses, kept until they change
 * @param chunkSize bytes read from the cluster and sent to a client at a time
 * @param region the region the proxy reports
 * @param bucketMode the mode of a bucket created without an ACL ({@code strata.proxy.bucket.mode})
 * @param lifecycleDay how long a day of a lifecycle rule is ({@code strata.proxy.lifecycle.day})
 */
record ProxyContext(
    FileSystem fs,
    StatusCache statuses,
    Buckets buckets,
    AccessControl access,
    UserGroups groups,
    KeyLocks locks,
    int chunkSize,
    String region,
    int bucketMode,
    Duration lifecycleDay) {}
