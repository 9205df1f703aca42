"""Every S3 operation the Strata S3 proxy supports, through boto3, each answer checked.

Usage: python boto3_script.py ENDPOINT ACCESS_KEY SECRET_KEY BUCKET UNDER_STORE_ROOT

Creates BUCKET and BUCKET-2 (neither may exist), works in them and deletes them again.
UNDER_STORE_ROOT is the under store's folder that the proxy's buckets are folders of: objects
written here are read back from there too. Prints one line a check ("ok   <check>") and exits
1 at the first failure ("FAIL <check>: <what was wrong>").

boto3 sends checksums as headers over plain HTTP and as aws-chunked trailers
(STREAMING-UNSIGNED-PAYLOAD-TRAILER) over HTTPS; the proxy listens on HTTP, so a second client
is made to send trailers as it would over HTTPS, and what went on the wire is checked.
"""

import base64
import datetime
import hashlib
import http.client
import io
import os
import random
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import zlib

import boto3
import botocore
from awscrt import checksums as crt
from boto3.s3.transfer import TransferConfig
from botocore import httpchecksum
from botocore.config import Config
from botocore.exceptions import ClientError

MIB = 1 << 20


class CheckFailed(Exception):
    pass


def ok(name):
    print(f"ok   {name}", flush=True)


def check(name, condition, detail=""):
    if not condition:
        raise CheckFailed(f"{name}: {detail}")
    ok(name)


def equal(name, expected, actual):
    check(name, expected == actual, f"expected {short(expected)!r}, got {short(actual)!r}")


def same_bytes(name, expected, actual):
    if expected != actual:
        at = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b),
                  min(len(expected), len(actual)))
        raise CheckFailed(f"{name}: {len(actual)} bytes differ from the {len(expected)} written"
                          f" (first difference at byte {at})")
    ok(name)


def short(v):
    if isinstance(v, (bytes, bytearray)) and len(v) > 64:
        return f"<{len(v)} bytes>"
    return v


def fails(name, call, code, status=None):
    """Checks that call() is answered with the S3 error code (and HTTP status)."""
    try:
        call()
    except ClientError as e:
        got = e.response.get("Error", {}).get("Code")
        got_status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        check(name, got == code and (status is None or got_status == status),
              f"expected {code} ({status}), got {got} ({got_status}): {e}")
        return e
    raise CheckFailed(f"{name}: expected the error {code}, the call succeeded")


def data(n, seed):
    return random.Random(seed).randbytes(n)


def b64(raw):
    return base64.b64encode(raw).decode()


def local_checksum(algorithm, body):
    """The checksum S3 gives for body, computed here (zlib, awscrt, hashlib)."""
    if algorithm == "CRC32":
        return b64(zlib.crc32(body).to_bytes(4, "big"))
    if algorithm == "CRC32C":
        return b64(crt.crc32c(body).to_bytes(4, "big"))
    if algorithm == "CRC64NVME":
        return b64(crt.crc64nvme(body).to_bytes(8, "big"))
    if algorithm == "SHA1":
        return b64(hashlib.sha1(body).digest())
    if algorithm == "SHA256":
        return b64(hashlib.sha256(body).digest())
    raise ValueError(algorithm)


def composite_checksum(algorithm, parts):
    """A multipart upload's COMPOSITE checksum: of the parts' checksums, then -N."""
    raw = b"".join(base64.b64decode(local_checksum(algorithm, p)) for p in parts)
    return f"{local_checksum(algorithm, raw)}-{len(parts)}"


def multipart_etag(parts):
    return '"%s-%d"' % (hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts))
                        .hexdigest(), len(parts))


def md5_etag(body):
    return '"%s"' % hashlib.md5(body).hexdigest()


class Wire:
    """Records the headers of the requests a client sends."""

    def __init__(self, client):
        self.sent = []
        client.meta.events.register("before-send.s3", self._record)

    def _record(self, request, **kwargs):
        headers = {k.lower(): (v.decode() if isinstance(v, bytes) else v)
                   for k, v in request.headers.items()}
        self.sent.append((request.method, request.url, headers))

    def last(self, method):
        for m, url, headers in reversed(self.sent):
            if m == method:
                return headers
        raise CheckFailed(f"no {method} request was sent")


def send_checksums_as_trailers(client):
    """Makes client send request checksums the way boto3 does over HTTPS: as a trailer."""

    def to_trailer(params, **kwargs):
        algorithm = params.get("context", {}).get("checksum", {}).get("request_algorithm")
        if isinstance(algorithm, dict) and algorithm.get("in") == "header":
            algorithm["in"] = "trailer"

    for op in ("PutObject", "UploadPart"):
        client.meta.events.register(f"before-call.s3.{op}", to_trailer)


def make_client(endpoint, key, secret):
    return boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret,
        region_name="us-east-1",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"},
                      retries={"total_max_attempts": 1}, connect_timeout=10, read_timeout=60))


class Script:
    def __init__(self, endpoint, key, secret, bucket, under_store):
        self.endpoint = endpoint
        self.bucket = bucket
        self.bucket2 = bucket + "-2"
        self.under_store = under_store
        self.s3 = make_client(endpoint, key, secret)
        self.wire = Wire(self.s3)
        self.trailers = make_client(endpoint, key, secret)
        send_checksums_as_trailers(self.trailers)
        self.trailer_wire = Wire(self.trailers)
        self.key = key
        self.secret = secret

    def run(self):
        print(f"boto3 {boto3.__version__}, botocore {botocore.__version__}", flush=True)
        for section in (self.buckets, self.checksums, self.bad_digests,
                        self.ranges_and_conditions, self.metadata, self.copies,
                        self.tagging_and_acls, self.listings, self.delete_objects,
                        self.transfers, self.explicit_multipart, self.presigned,
                        self.credentials, self.cleanup):
            started = time.monotonic()
            section()
            print(f"-- {section.__name__} done in {time.monotonic() - started:.1f} s", flush=True)

    def under_store_bytes(self, bucket, key):
        with open(os.path.join(self.under_store, bucket, key), "rb") as f:
            return f.read()

    def get(self, key, bucket=None, **kwargs):
        r = self.s3.get_object(Bucket=bucket or self.bucket, Key=key, **kwargs)
        return r, r["Body"].read()

    # -- buckets ---------------------------------------------------------------------------

    def buckets(self):
        s3 = self.s3
        r = s3.create_bucket(Bucket=self.bucket)
        equal("create_bucket answers 200", 200, r["ResponseMetadata"]["HTTPStatusCode"])
        s3.create_bucket(Bucket=self.bucket2)
        check("the bucket is a folder of the under store",
              os.path.isdir(os.path.join(self.under_store, self.bucket)))
        fails("create_bucket of a bucket one owns", lambda: s3.create_bucket(Bucket=self.bucket),
              "BucketAlreadyOwnedByYou", 409)
        r = s3.head_bucket(Bucket=self.bucket)
        equal("head_bucket answers 200", 200, r["ResponseMetadata"]["HTTPStatusCode"])
        fails("head_bucket of a missing bucket", lambda: s3.head_bucket(Bucket="no-such-bkt"),
              "404", 404)
        names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
        check("list_buckets names both buckets",
              self.bucket in names and self.bucket2 in names, f"got {names}")
        location = s3.get_bucket_location(Bucket=self.bucket).get("LocationConstraint")
        check("get_bucket_location", location in (None, "us-east-1"), f"got {location!r}")
        versioning = s3.get_bucket_versioning(Bucket=self.bucket)
        equal("get_bucket_versioning: never enabled", None, versioning.get("Status"))
        acl = s3.get_bucket_acl(Bucket=self.bucket)
        check("get_bucket_acl: the owner has FULL_CONTROL",
              [g["Permission"] for g in acl["Grants"]] == ["FULL_CONTROL"]
              and acl["Owner"].get("ID"), f"got {acl['Grants']} {acl['Owner']}")
        r = s3.put_bucket_acl(Bucket=self.bucket, ACL="private")
        equal("put_bucket_acl private", 200, r["ResponseMetadata"]["HTTPStatusCode"])
        s3.put_bucket_acl(Bucket=self.bucket, ACL="public-read")
        acl = s3.get_bucket_acl(Bucket=self.bucket)
        check("put_bucket_acl public-read: AllUsers may read",
              any(g["Grantee"].get("URI", "").endswith("/global/AllUsers")
                  and g["Permission"] == "READ" for g in acl["Grants"]), f"got {acl['Grants']}")
        s3.put_bucket_acl(Bucket=self.bucket, ACL="private")
        fails("get_bucket_policy of a bucket without one",
              lambda: s3.get_bucket_policy(Bucket=self.bucket), "NoSuchBucketPolicy", 404)
        policy = ('{"Version": "2012-10-17", "Statement": [{"Sid": "ReadPublic", "Effect": "Allow",'
                  ' "Principal": "*", "Action": "s3:GetObject",'
                  f' "Resource": "arn:aws:s3:::{self.bucket}/public/*"}}]}}')
        s3.put_bucket_policy(Bucket=self.bucket, Policy=policy)
        equal("get_bucket_policy returns what was put", policy,
              s3.get_bucket_policy(Bucket=self.bucket)["Policy"])
        s3.delete_bucket_policy(Bucket=self.bucket)
        fails("put_bucket_policy with an action Strata does not know",
              lambda: s3.put_bucket_policy(Bucket=self.bucket, Policy=policy.replace(
                  "s3:GetObject", "ec2:RunInstances")), "MalformedPolicy", 400)

    # -- checksums -------------------------------------------------------------------------

    def checksums(self):
        # Default checksums: boto3 computes a CRC32 of every PutObject unasked.
        body = data(300_000, 1)
        r = self.s3.put_object(Bucket=self.bucket, Key="sums/default", Body=body)
        sent = self.wire.last("PUT")
        check("default put sends x-amz-checksum-crc32 as a header over HTTP",
              sent.get("x-amz-checksum-crc32") == local_checksum("CRC32", body),
              f"headers {sorted(sent)}")
        equal("default put: ETag is the MD5", md5_etag(body), r["ETag"])
        equal("default put: CRC32 answered", local_checksum("CRC32", body), r.get("ChecksumCRC32"))
        g, got = self.get("sums/default", ChecksumMode="ENABLED")
        same_bytes("default put: read back", body, got)
        equal("default put: CRC32 returned on get", local_checksum("CRC32", body),
              g.get("ChecksumCRC32"))
        equal("default put: checksum type FULL_OBJECT", "FULL_OBJECT", g.get("ChecksumType"))
        same_bytes("default put: the under store holds the object",
                   body, self.under_store_bytes(self.bucket, "sums/default"))

        r = self.trailers.put_object(Bucket=self.bucket, Key="sums/default-trailer", Body=body)
        sent = self.trailer_wire.last("PUT")
        check("default put over the trailer client is aws-chunked with an unsigned trailer",
              sent.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
              and sent.get("x-amz-trailer") == "x-amz-checksum-crc32"
              and "aws-chunked" in sent.get("content-encoding", "")
              and sent.get("x-amz-decoded-content-length") == str(len(body)),
              f"headers {sent}")
        equal("trailer put: CRC32 answered", local_checksum("CRC32", body), r.get("ChecksumCRC32"))
        equal("trailer put: ETag is the MD5", md5_etag(body), r["ETag"])
        g, got = self.get("sums/default-trailer", ChecksumMode="ENABLED")
        same_bytes("trailer put: read back", body, got)
        check("trailer put: no aws-chunked content-encoding kept",
              "aws-chunked" not in (g.get("ContentEncoding") or ""),
              f"got {g.get('ContentEncoding')}")

        algorithms = ["CRC32", "CRC32C", "SHA1", "SHA256"]
        if "crc64nvme" in httpchecksum._CRT_CHECKSUM_CLS:
            algorithms.insert(2, "CRC64NVME")
        else:
            print("note CRC64NVME not supported by this botocore", flush=True)
        for i, algorithm in enumerate(algorithms):
            for how, client, wire in (("header", self.s3, self.wire),
                                      ("trailer", self.trailers, self.trailer_wire)):
                body = data(70_000 + 1000 * i, 10 + i)
                key = f"sums/{algorithm}-{how}"
                member = "Checksum" + algorithm
                r = client.put_object(Bucket=self.bucket, Key=key, Body=body,
                                      ChecksumAlgorithm=algorithm)
                sent = wire.last("PUT")
                header = "x-amz-checksum-" + algorithm.lower()
                if how == "header":
                    check(f"{algorithm} put sends {header}", header in sent, f"headers {sent}")
                else:
                    check(f"{algorithm} put sends {header} as a trailer",
                          sent.get("x-amz-trailer") == header, f"headers {sent}")
                equal(f"{algorithm} ({how}): checksum answered", local_checksum(algorithm, body),
                      r.get(member))
                g, got = self.get(key, ChecksumMode="ENABLED")
                same_bytes(f"{algorithm} ({how}): read back", body, got)
                equal(f"{algorithm} ({how}): checksum returned on get",
                      local_checksum(algorithm, body), g.get(member))
                h = self.s3.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
                equal(f"{algorithm} ({how}): checksum returned on head",
                      local_checksum(algorithm, body), h.get(member))

        body = data(12_345, 20)
        md5 = b64(hashlib.md5(body).digest())
        r = self.s3.put_object(Bucket=self.bucket, Key="sums/md5", Body=body, ContentMD5=md5)
        equal("put with Content-MD5: ETag is the MD5", md5_etag(body), r["ETag"])
        same_bytes("put with Content-MD5: read back", body, self.get("sums/md5")[1])

    def bad_digests(self):
        body = data(5000, 21)
        wrong_md5 = b64(hashlib.md5(b"something else").digest())
        fails("put with a wrong Content-MD5",
              lambda: self.s3.put_object(Bucket=self.bucket, Key="sums/bad-md5", Body=body,
                                         ContentMD5=wrong_md5), "BadDigest", 400)
        fails("the object of a put with a wrong Content-MD5 is not there",
              lambda: self.s3.head_object(Bucket=self.bucket, Key="sums/bad-md5"), "404", 404)
        wrong = local_checksum("SHA256", b"something else")
        e = None
        try:
            self.s3.put_object(Bucket=self.bucket, Key="sums/bad-sha", Body=body,
                               ChecksumSHA256=wrong)
        except ClientError as err:
            e = err
        check("put with a wrong x-amz-checksum-sha256 is refused with 400",
              e is not None and e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
              and e.response["Error"]["Code"] in ("BadDigest", "InvalidRequest"),
              "it succeeded" if e is None else str(e))
        fails("the object of a put with a wrong checksum is not there",
              lambda: self.s3.head_object(Bucket=self.bucket, Key="sums/bad-sha"), "404", 404)

    # -- ranges and conditions -------------------------------------------------------------

    def ranges_and_conditions(self):
        s3 = self.s3
        body = data(10_000, 30)
        put = s3.put_object(Bucket=self.bucket, Key="cond/obj", Body=body)
        etag = put["ETag"]
        g, got = self.get("cond/obj", Range="bytes=100-199")
        same_bytes("range 100-199", body[100:200], got)
        equal("range 100-199: Content-Range", "bytes 100-199/10000", g["ContentRange"])
        equal("range 100-199: status 206", 206, g["ResponseMetadata"]["HTTPStatusCode"])
        same_bytes("suffix range -50", body[-50:], self.get("cond/obj", Range="bytes=-50")[1])
        same_bytes("open range 9000-", body[9000:], self.get("cond/obj", Range="bytes=9000-")[1])
        same_bytes("range past the end is cut to it", body[9990:],
                   self.get("cond/obj", Range="bytes=9990-20000")[1])
        g, got = self.get("cond/obj", Range="bytes=0-9", ChecksumMode="ENABLED")
        check("range with ChecksumMode: no whole-object checksum for a part of it",
              got == body[:10] and "ChecksumCRC32" not in g, f"got {g.get('ChecksumCRC32')}")
        fails("range starting past the end", lambda: self.get("cond/obj", Range="bytes=20000-"),
              "InvalidRange", 416)

        modified = s3.head_object(Bucket=self.bucket, Key="cond/obj")["LastModified"]
        day = datetime.timedelta(days=1)
        g, got = self.get("cond/obj", IfMatch=etag)
        same_bytes("get If-Match the ETag", body, got)
        fails("get If-Match another ETag", lambda: self.get("cond/obj", IfMatch='"0000"'),
              "PreconditionFailed", 412)
        fails("get If-None-Match the ETag", lambda: self.get("cond/obj", IfNoneMatch=etag),
              "304", 304)
        fails("head If-None-Match the ETag",
              lambda: s3.head_object(Bucket=self.bucket, Key="cond/obj", IfNoneMatch=etag),
              "304", 304)
        same_bytes("get If-None-Match another ETag", body,
                   self.get("cond/obj", IfNoneMatch='"0000"')[1])
        fails("get If-Modified-Since a day later",
              lambda: self.get("cond/obj", IfModifiedSince=modified + day), "304", 304)
        same_bytes("get If-Modified-Since a day before", body,
                   self.get("cond/obj", IfModifiedSince=modified - day)[1])
        fails("get If-Unmodified-Since a day before",
              lambda: self.get("cond/obj", IfUnmodifiedSince=modified - day),
              "PreconditionFailed", 412)
        same_bytes("get If-Unmodified-Since a day later", body,
                   self.get("cond/obj", IfUnmodifiedSince=modified + day)[1])

        fails("put If-None-Match * over an object",
              lambda: s3.put_object(Bucket=self.bucket, Key="cond/obj", Body=b"new",
                                    IfNoneMatch="*"), "PreconditionFailed", 412)
        same_bytes("the object refused by If-None-Match * is unchanged", body,
                   self.get("cond/obj")[1])
        r = s3.put_object(Bucket=self.bucket, Key="cond/new", Body=b"first", IfNoneMatch="*")
        equal("put If-None-Match * of a new key", md5_etag(b"first"), r["ETag"])
        fails("put If-Match another ETag",
              lambda: s3.put_object(Bucket=self.bucket, Key="cond/obj", Body=b"new",
                                    IfMatch='"0000"'), "PreconditionFailed", 412)
        r = s3.put_object(Bucket=self.bucket, Key="cond/obj", Body=b"replaced", IfMatch=etag)
        equal("put If-Match the ETag replaces", md5_etag(b"replaced"), r["ETag"])
        same_bytes("the replaced object", b"replaced", self.get("cond/obj")[1])

    # -- metadata and content headers ------------------------------------------------------

    def metadata(self):
        s3 = self.s3
        body = b"<p>hello</p>"
        expires = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
        s3.put_object(Bucket=self.bucket, Key="meta/page.html", Body=body,
                      ContentType="text/html; charset=utf-8", CacheControl="max-age=60",
                      ContentDisposition='attachment; filename="page.html"',
                      ContentLanguage="en-GB", Expires=expires,
                      Metadata={"colour": "blue", "with-dash": "a value with spaces"})
        h = s3.head_object(Bucket=self.bucket, Key="meta/page.html")
        equal("head: Content-Type", "text/html; charset=utf-8", h["ContentType"])
        equal("head: Cache-Control", "max-age=60", h.get("CacheControl"))
        equal("head: Content-Disposition", 'attachment; filename="page.html"',
              h.get("ContentDisposition"))
        equal("head: Content-Language", "en-GB", h.get("ContentLanguage"))
        equal("head: Expires", expires, h.get("Expires"))
        equal("head: user metadata", {"colour": "blue", "with-dash": "a value with spaces"},
              h["Metadata"])
        equal("head: Content-Length", len(body), h["ContentLength"])
        equal("head: ETag", md5_etag(body), h["ETag"])
        check("head: Last-Modified is recent",
              abs((datetime.datetime.now(datetime.timezone.utc) - h["LastModified"])
                  .total_seconds()) < 600, f"got {h['LastModified']}")
        g, got = self.get("meta/page.html", ResponseContentType="text/plain",
                          ResponseContentDisposition="inline", ResponseCacheControl="no-cache")
        equal("get response-content-type override", "text/plain", g["ContentType"])
        equal("get response-content-disposition override", "inline", g["ContentDisposition"])
        equal("get response-cache-control override", "no-cache", g["CacheControl"])
        equal("get: user metadata", {"colour": "blue", "with-dash": "a value with spaces"},
              g["Metadata"])
        same_bytes("get: body", body, got)
        s3.put_object(Bucket=self.bucket, Key="meta/empty", Body=b"")
        h = s3.head_object(Bucket=self.bucket, Key="meta/empty")
        equal("empty object: length 0", 0, h["ContentLength"])
        same_bytes("empty object: empty body", b"", self.get("meta/empty")[1])
        s3.put_object(Bucket=self.bucket, Key="meta/folder/", Body=b"")
        h = s3.head_object(Bucket=self.bucket, Key="meta/folder/")
        equal("folder key: head answers length 0", 0, h["ContentLength"])
        odd = "meta/odd name+%20&=ü€ (1).txt"
        s3.put_object(Bucket=self.bucket, Key=odd, Body=b"odd")
        same_bytes("key with spaces, +, %, & and non-ASCII: read back", b"odd",
                   self.get(odd)[1])
        same_bytes("key with spaces, +, %, & and non-ASCII: in the under store", b"odd",
                   self.under_store_bytes(self.bucket, odd))
        for odd in ("meta/what?#frag;x=1", "meta/smile 😀 ~!$'()*,:@"):
            s3.put_object(Bucket=self.bucket, Key=odd, Body=odd.encode())
            same_bytes(f"key {odd!r}: read back", odd.encode(), self.get(odd)[1])
        fails("a key with an empty segment, which no path can name",
              lambda: s3.put_object(Bucket=self.bucket, Key="meta//x", Body=b"x"),
              "InvalidArgument", 400)
        fails("get of a missing key", lambda: self.get("meta/missing"), "NoSuchKey", 404)
        fails("head of a missing key",
              lambda: s3.head_object(Bucket=self.bucket, Key="meta/missing"), "404", 404)
        fails("get in a missing bucket", lambda: self.get("x", bucket="no-such-bkt"),
              "NoSuchBucket", 404)

    # -- copies ----------------------------------------------------------------------------

    def copies(self):
        s3 = self.s3
        body = data(200_000, 40)
        s3.put_object(Bucket=self.bucket, Key="copy/src", Body=body, ContentType="x/source",
                      Metadata={"origin": "src"}, Tagging="t=1")
        src = {"Bucket": self.bucket, "Key": "copy/src"}
        r = s3.copy_object(Bucket=self.bucket2, Key="copy/dst", CopySource=src)
        equal("copy (COPY): ETag of the same bytes", md5_etag(body),
              r["CopyObjectResult"]["ETag"])
        g, got = self.get("copy/dst", bucket=self.bucket2)
        same_bytes("copy (COPY) to another bucket: bytes", body, got)
        equal("copy (COPY): metadata copied", {"origin": "src"}, g["Metadata"])
        equal("copy (COPY): Content-Type copied", "x/source", g["ContentType"])
        equal("copy (COPY): tags copied", [{"Key": "t", "Value": "1"}],
              s3.get_object_tagging(Bucket=self.bucket2, Key="copy/dst")["TagSet"])
        same_bytes("copy: in the under store", body,
                   self.under_store_bytes(self.bucket2, "copy/dst"))

        s3.copy_object(Bucket=self.bucket, Key="copy/replaced", CopySource=src,
                       MetadataDirective="REPLACE", ContentType="x/new",
                       Metadata={"origin": "replaced"}, TaggingDirective="REPLACE",
                       Tagging="u=2")
        g, got = self.get("copy/replaced")
        same_bytes("copy (REPLACE): bytes", body, got)
        equal("copy (REPLACE): new metadata", {"origin": "replaced"}, g["Metadata"])
        equal("copy (REPLACE): new Content-Type", "x/new", g["ContentType"])
        equal("copy (REPLACE): new tags", [{"Key": "u", "Value": "2"}],
              s3.get_object_tagging(Bucket=self.bucket, Key="copy/replaced")["TagSet"])

        s3.copy_object(Bucket=self.bucket, Key="copy/src", CopySource=src,
                       MetadataDirective="REPLACE", Metadata={"origin": "self"})
        g, got = self.get("copy/src")
        equal("copy onto itself (REPLACE): metadata changed", {"origin": "self"}, g["Metadata"])
        same_bytes("copy onto itself (REPLACE): bytes unchanged", body, got)
        fails("copy onto itself without REPLACE",
              lambda: s3.copy_object(Bucket=self.bucket, Key="copy/src", CopySource=src),
              "InvalidRequest", 400)
        etag = md5_etag(body)
        r = s3.copy_object(Bucket=self.bucket, Key="copy/if", CopySource=src,
                           CopySourceIfMatch=etag)
        equal("copy if the source matches", etag, r["CopyObjectResult"]["ETag"])
        fails("copy if the source matches another ETag",
              lambda: s3.copy_object(Bucket=self.bucket, Key="copy/if2", CopySource=src,
                                     CopySourceIfMatch='"0000"'), "PreconditionFailed", 412)
        fails("copy if the source has changed (it has not)",
              lambda: s3.copy_object(Bucket=self.bucket, Key="copy/if2", CopySource=src,
                                     CopySourceIfNoneMatch=etag), "PreconditionFailed", 412)
        fails("copy of a missing source",
              lambda: s3.copy_object(Bucket=self.bucket, Key="copy/x",
                                     CopySource={"Bucket": self.bucket, "Key": "copy/none"}),
              "NoSuchKey", 404)
        r = s3.copy_object(Bucket=self.bucket, Key="copy/sha", CopySource=src,
                           ChecksumAlgorithm="SHA256")
        equal("copy with ChecksumAlgorithm SHA256: checksum of the bytes",
              local_checksum("SHA256", body), r["CopyObjectResult"].get("ChecksumSHA256"))
        odd = "copy/odd name+ü.bin"
        s3.copy_object(Bucket=self.bucket, Key=odd,
                       CopySource={"Bucket": self.bucket, "Key": "copy/src"})
        s3.copy_object(Bucket=self.bucket, Key="copy/from-odd",
                       CopySource={"Bucket": self.bucket, "Key": odd})
        same_bytes("copy to and from a key with spaces, + and non-ASCII", body,
                   self.get("copy/from-odd")[1])

    # -- tagging and ACLs ------------------------------------------------------------------

    def tagging_and_acls(self):
        s3 = self.s3
        s3.put_object(Bucket=self.bucket, Key="tags/obj", Body=b"tagged",
                      Tagging="a=1&b=two%20words")
        equal("put with Tagging: tags", [{"Key": "a", "Value": "1"},
                                         {"Key": "b", "Value": "two words"}],
              sorted(s3.get_object_tagging(Bucket=self.bucket, Key="tags/obj")["TagSet"],
                     key=lambda t: t["Key"]))
        equal("head: tag count", 2,
              s3.get_object(Bucket=self.bucket, Key="tags/obj").get("TagCount"))
        s3.put_object_tagging(Bucket=self.bucket, Key="tags/obj",
                              Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
        equal("put_object_tagging replaces the tags", [{"Key": "k", "Value": "v"}],
              s3.get_object_tagging(Bucket=self.bucket, Key="tags/obj")["TagSet"])
        r = s3.delete_object_tagging(Bucket=self.bucket, Key="tags/obj")
        equal("delete_object_tagging answers 204", 204, r["ResponseMetadata"]["HTTPStatusCode"])
        equal("no tags after delete_object_tagging", [],
              s3.get_object_tagging(Bucket=self.bucket, Key="tags/obj")["TagSet"])
        fails("tagging of a missing key",
              lambda: s3.get_object_tagging(Bucket=self.bucket, Key="tags/none"),
              "NoSuchKey", 404)
        acl = s3.get_object_acl(Bucket=self.bucket, Key="tags/obj")
        equal("get_object_acl: FULL_CONTROL of the owner", ["FULL_CONTROL"],
              [g["Permission"] for g in acl["Grants"]])
        r = s3.put_object_acl(Bucket=self.bucket, Key="tags/obj", ACL="private")
        equal("put_object_acl private", 200, r["ResponseMetadata"]["HTTPStatusCode"])
        s3.put_object(Bucket=self.bucket, Key="tags/pub", Body=b"x", ACL="public-read")
        acl = s3.get_object_acl(Bucket=self.bucket, Key="tags/pub")
        check("put_object public-read: AllUsers may read",
              any(g["Grantee"].get("URI", "").endswith("/global/AllUsers")
                  and g["Permission"] == "READ" for g in acl["Grants"]), f"got {acl['Grants']}")
        anonymous = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                                 config=Config(
                                     signature_version=botocore.UNSIGNED,
                                     s3={"addressing_style": "path"}))
        equal("an unsigned client reads a public-read object", b"x",
              anonymous.get_object(Bucket=self.bucket, Key="tags/pub")["Body"].read())
        fails("an unsigned client may not read a private object",
              lambda: anonymous.get_object(Bucket=self.bucket, Key="tags/obj"),
              "AccessDenied", 403)
        fails("an ACL that grants an AWS service",
              lambda: s3.put_object(Bucket=self.bucket, Key="tags/exec", Body=b"x",
                                    ACL="aws-exec-read"), "NotImplemented", 501)

    # -- listings --------------------------------------------------------------------------

    def listings(self):
        s3 = self.s3
        keys = ["list/a.txt", "list/b/1", "list/b/2", "list/b/3/deep", "list/c d/x",
                "list/c+d", "list/e/", "list/f.txt", "list/g/h/i", "list/z ü"]
        def content(k):
            return b"" if k.endswith("/") else k.encode()

        for k in keys:
            s3.put_object(Bucket=self.bucket, Key=k, Body=content(k))
        ordered = sorted(keys, key=lambda k: k.encode())
        r = s3.list_objects_v2(Bucket=self.bucket, Prefix="list/")
        equal("list_objects_v2 prefix: keys in UTF-8 order", ordered,
              [o["Key"] for o in r["Contents"]])
        equal("list_objects_v2: KeyCount", len(keys), r["KeyCount"])
        sizes = {o["Key"]: o["Size"] for o in r["Contents"]}
        equal("list_objects_v2: sizes", {k: len(content(k)) for k in keys}, sizes)
        etags = {o["Key"]: o["ETag"] for o in r["Contents"]}
        equal("list_objects_v2: ETags", {k: md5_etag(content(k)) for k in keys}, etags)

        r = s3.list_objects_v2(Bucket=self.bucket, Prefix="list/", Delimiter="/")
        equal("list_objects_v2 delimiter: objects", ["list/a.txt", "list/c+d", "list/f.txt",
                                                     "list/z ü"],
              [o["Key"] for o in r.get("Contents", [])])
        equal("list_objects_v2 delimiter: common prefixes",
              ["list/b/", "list/c d/", "list/e/", "list/g/"],
              [p["Prefix"] for p in r.get("CommonPrefixes", [])])

        pages = list(s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix="list/", PaginationConfig={"PageSize": 3}))
        check("list_objects_v2 paginator: several pages", len(pages) == 4,
              f"got {len(pages)} pages")
        equal("list_objects_v2 paginator: every key once, in order", ordered,
              [o["Key"] for p in pages for o in p.get("Contents", [])])
        pages = list(s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix="list/", Delimiter="/", PaginationConfig={"PageSize": 2}))
        check("list_objects_v2 paginator with delimiter: several pages", len(pages) >= 4,
              f"got {len(pages)} pages")
        equal("list_objects_v2 paginator with delimiter: objects and prefixes",
              ["list/a.txt", "list/b/", "list/c d/", "list/c+d", "list/e/", "list/f.txt",
               "list/g/", "list/z ü"],
              [o.get("Key") or o.get("Prefix") for p in pages
               for o in sorted(p.get("Contents", []) + p.get("CommonPrefixes", []),
                               key=lambda x: (x.get("Key") or x.get("Prefix")).encode())])
        r = s3.list_objects_v2(Bucket=self.bucket, Prefix="list/", StartAfter="list/c d/x")
        equal("list_objects_v2 StartAfter", ordered[ordered.index("list/c d/x") + 1:],
              [o["Key"] for o in r["Contents"]])
        r = s3.list_objects_v2(Bucket=self.bucket, Prefix="list/b/", FetchOwner=True,
                               MaxKeys=1)
        check("list_objects_v2 FetchOwner and MaxKeys 1: truncated with an owner",
              r["IsTruncated"] and len(r["Contents"]) == 1 and r["Contents"][0].get("Owner"),
              f"got {r.get('Contents')} truncated={r['IsTruncated']}")
        r = s3.list_objects_v2(Bucket=self.bucket, Prefix="list/z", EncodingType="url")
        # Asked for by the caller, the encoding is left for the caller to undo.
        got = [o["Key"] for o in r["Contents"]]
        check("list_objects_v2 EncodingType url: keys URL-encoded",
              [urllib.parse.unquote_plus(k) for k in got] == ["list/z ü"]
              and all(k.isascii() and " " not in k for k in got), f"got {got}")

        r = s3.list_objects(Bucket=self.bucket, Prefix="list/")
        equal("list_objects (v1) prefix", ordered, [o["Key"] for o in r["Contents"]])
        pages = list(s3.get_paginator("list_objects").paginate(
            Bucket=self.bucket, Prefix="list/", Delimiter="/", PaginationConfig={"PageSize": 2}))
        check("list_objects paginator with delimiter: several pages", len(pages) >= 4,
              f"got {len(pages)} pages")
        equal("list_objects paginator with delimiter: objects",
              ["list/a.txt", "list/c+d", "list/f.txt", "list/z ü"],
              [o["Key"] for p in pages for o in p.get("Contents", [])])
        equal("list_objects paginator with delimiter: prefixes",
              ["list/b/", "list/c d/", "list/e/", "list/g/"],
              [o["Prefix"] for p in pages for o in p.get("CommonPrefixes", [])])
        r = s3.list_objects(Bucket=self.bucket, Prefix="list/", Marker="list/f.txt")
        equal("list_objects Marker", ordered[ordered.index("list/f.txt") + 1:],
              [o["Key"] for o in r["Contents"]])
        r = s3.list_objects_v2(Bucket=self.bucket, Prefix="nothing-here/")
        equal("list_objects_v2 of an empty prefix", 0, r["KeyCount"])
        fails("list_objects_v2 of a missing bucket",
              lambda: s3.list_objects_v2(Bucket="no-such-bkt"), "NoSuchBucket", 404)

    # -- delete ----------------------------------------------------------------------------

    def delete_objects(self):
        s3 = self.s3
        r = s3.delete_object(Bucket=self.bucket, Key="list/a.txt")
        equal("delete_object answers 204", 204, r["ResponseMetadata"]["HTTPStatusCode"])
        fails("the deleted object is gone",
              lambda: s3.head_object(Bucket=self.bucket, Key="list/a.txt"), "404", 404)
        check("the deleted object is gone from the under store",
              not os.path.exists(os.path.join(self.under_store, self.bucket, "list/a.txt")))
        r = s3.delete_object(Bucket=self.bucket, Key="list/never-was")
        equal("delete_object of a missing key answers 204", 204,
              r["ResponseMetadata"]["HTTPStatusCode"])
        r = s3.delete_objects(Bucket=self.bucket, Delete={"Objects": [
            {"Key": "list/b/1"}, {"Key": "list/b/2"}, {"Key": "list/not-there"}]})
        equal("delete_objects: each key reported deleted",
              ["list/b/1", "list/b/2", "list/not-there"],
              sorted(d["Key"] for d in r.get("Deleted", [])))
        equal("delete_objects: no errors", [], r.get("Errors", []))
        sent = self.wire.last("POST")
        check("delete_objects sent a checksum of its document",
              "content-md5" in sent or any(h.startswith("x-amz-checksum-") for h in sent),
              f"headers {sorted(sent)}")
        r = s3.delete_objects(Bucket=self.bucket, Delete={"Quiet": True, "Objects": [
            {"Key": "list/b/3/deep"}, {"Key": "list/c d/x"}]})
        equal("delete_objects quiet: nothing reported", ([], []),
              (r.get("Deleted", []), r.get("Errors", [])))
        remaining = [o["Key"] for o in s3.list_objects_v2(Bucket=self.bucket,
                                                          Prefix="list/")["Contents"]]
        equal("the keys left after the deletes",
              ["list/c+d", "list/e/", "list/f.txt", "list/g/h/i", "list/z ü"], remaining)
        check("emptied folders are gone from the under store",
              not os.path.exists(os.path.join(self.under_store, self.bucket, "list/b")))

    # -- transfers (s3transfer) ------------------------------------------------------------

    def transfers(self):
        config = TransferConfig(multipart_threshold=5 * MIB, multipart_chunksize=5 * MIB,
                                max_concurrency=4)
        body = data(17 * MIB + 123, 50)
        parts = [body[i:i + 5 * MIB] for i in range(0, len(body), 5 * MIB)]
        for how, client, wire in (("header", self.s3, self.wire),
                                  ("trailer", self.trailers, self.trailer_wire)):
            key = f"big/upload-{how}.bin"
            client.upload_fileobj(io.BytesIO(body), self.bucket, key, Config=config)
            h = self.s3.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
            equal(f"upload_fileobj ({how}): a multipart ETag of 4 parts", multipart_etag(parts),
                  h["ETag"])
            equal(f"upload_fileobj ({how}): length", len(body), h["ContentLength"])
            if h.get("ChecksumType") == "COMPOSITE":
                expected = composite_checksum("CRC32", parts)
            else:
                expected = local_checksum("CRC32", body)
            equal(f"upload_fileobj ({how}): CRC32 ({h.get('ChecksumType')})", expected,
                  h.get("ChecksumCRC32"))
            sent = [hd for m, url, hd in wire.sent if m == "PUT" and "partNumber=" in url]
            check(f"upload_fileobj ({how}): 4 parts sent, each with a CRC32 ({how})",
                  len(sent) == 4 and all(
                      ("x-amz-checksum-crc32" in hd) if how == "header"
                      else hd.get("x-amz-trailer") == "x-amz-checksum-crc32" for hd in sent),
                  f"{len(sent)} part uploads: {sent}")
            wire.sent.clear()
            out = io.BytesIO()
            self.s3.download_fileobj(self.bucket, key, out, Config=config)
            same_bytes(f"download_fileobj ({how}) in ranges: bytes", body, out.getvalue())
            same_bytes(f"upload_fileobj ({how}): the under store holds the object", body,
                       self.under_store_bytes(self.bucket, key))

        # A full-object checksum given by the caller: one CRC64NVME of the whole object.
        if "crc64nvme" in httpchecksum._CRT_CHECKSUM_CLS:
            whole = local_checksum("CRC64NVME", body)
            self.s3.upload_fileobj(io.BytesIO(body), self.bucket, "big/full-crc64.bin",
                                   Config=config, ExtraArgs={"ChecksumCRC64NVME": whole})
            h = self.s3.head_object(Bucket=self.bucket, Key="big/full-crc64.bin",
                                    ChecksumMode="ENABLED")
            equal("upload_fileobj with a full-object CRC64NVME: type", "FULL_OBJECT",
                  h.get("ChecksumType"))
            equal("upload_fileobj with a full-object CRC64NVME: checksum", whole,
                  h.get("ChecksumCRC64NVME"))
            g, got = self.get("big/full-crc64.bin", ChecksumMode="ENABLED")
            same_bytes("upload_fileobj with a full-object CRC64NVME: read back", body, got)

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "file.bin")
            with open(path, "wb") as f:
                f.write(body[:11 * MIB])
            self.s3.upload_file(path, self.bucket, "big/file.bin", Config=config)
            self.s3.download_file(self.bucket, "big/file.bin", path + ".back", Config=config)
            with open(path + ".back", "rb") as f:
                same_bytes("upload_file and download_file of 11 MiB", body[:11 * MIB], f.read())

    def explicit_multipart(self):
        s3 = self.s3
        key = "mpu/explicit.bin"
        source = data(6 * MIB, 60)
        s3.put_object(Bucket=self.bucket, Key="mpu/source.bin", Body=source)
        up = s3.create_multipart_upload(Bucket=self.bucket, Key=key, ContentType="x/mpu",
                                        Metadata={"kind": "explicit"}, ChecksumAlgorithm="CRC32C")
        upload_id = up["UploadId"]
        equal("create_multipart_upload: checksum algorithm", "CRC32C",
              up.get("ChecksumAlgorithm"))
        p1, p2 = data(5 * MIB, 61), data(5 * MIB + 7, 62)
        p3 = source[1000:1000 + 5 * MIB]
        p4 = data(1234, 63)
        r1 = s3.upload_part(Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=1,
                            Body=p1, ChecksumAlgorithm="CRC32C")
        equal("upload_part 1: ETag", md5_etag(p1), r1["ETag"])
        equal("upload_part 1: CRC32C", local_checksum("CRC32C", p1), r1.get("ChecksumCRC32C"))
        r2 = self.trailers.upload_part(Bucket=self.bucket, Key=key, UploadId=upload_id,
                                       PartNumber=2, Body=p2, ChecksumAlgorithm="CRC32C")
        equal("upload_part 2 (trailer): CRC32C", local_checksum("CRC32C", p2),
              r2.get("ChecksumCRC32C"))
        r3 = s3.upload_part_copy(Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=3,
                                 CopySource={"Bucket": self.bucket, "Key": "mpu/source.bin"},
                                 CopySourceRange=f"bytes=1000-{1000 + 5 * MIB - 1}")
        equal("upload_part_copy 3: ETag", md5_etag(p3), r3["CopyPartResult"]["ETag"])
        r4 = s3.upload_part(Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=4,
                            Body=p4, ChecksumAlgorithm="CRC32C")
        parts = s3.list_parts(Bucket=self.bucket, Key=key, UploadId=upload_id)
        equal("list_parts: numbers and sizes", [(1, len(p1)), (2, len(p2)), (3, len(p3)),
                                                (4, len(p4))],
              [(p["PartNumber"], p["Size"]) for p in parts["Parts"]])
        equal("list_parts: ETags", [md5_etag(p) for p in (p1, p2, p3, p4)],
              [p["ETag"] for p in parts["Parts"]])
        pages = list(s3.get_paginator("list_parts").paginate(
            Bucket=self.bucket, Key=key, UploadId=upload_id, PaginationConfig={"PageSize": 3}))
        equal("list_parts paginator: two pages of parts", [[1, 2, 3], [4]],
              [[p["PartNumber"] for p in page["Parts"]] for page in pages])
        uploads = s3.list_multipart_uploads(Bucket=self.bucket, Prefix="mpu/")
        equal("list_multipart_uploads: the upload", [(key, upload_id)],
              [(u["Key"], u["UploadId"]) for u in uploads.get("Uploads", [])])
        fails("get of the key before completion", lambda: self.get(key), "NoSuchKey", 404)
        fails("complete with a wrong part ETag",
              lambda: s3.complete_multipart_upload(
                  Bucket=self.bucket, Key=key, UploadId=upload_id,
                  MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"0000"'}]}),
              "InvalidPart", 400)
        fails("complete with a small part before the last",
              lambda: s3.complete_multipart_upload(
                  Bucket=self.bucket, Key=key, UploadId=upload_id,
                  MultipartUpload={"Parts": [{"PartNumber": 4, "ETag": r4["ETag"]},
                                             {"PartNumber": 1, "ETag": r1["ETag"]}]}),
              "InvalidPartOrder", 400)
        # Part 5 is left out of the completion below, which discards it.
        r5 = s3.upload_part(Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=5,
                            Body=b"left out", ChecksumAlgorithm="CRC32C")
        fails("complete with a small part that is not the last",
              lambda: s3.complete_multipart_upload(
                  Bucket=self.bucket, Key=key, UploadId=upload_id,
                  MultipartUpload={"Parts": [{"PartNumber": 4, "ETag": r4["ETag"]},
                                             {"PartNumber": 5, "ETag": r5["ETag"]}]}),
              "EntityTooSmall", 400)
        done = s3.complete_multipart_upload(
            Bucket=self.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": [
                {"PartNumber": 1, "ETag": r1["ETag"], "ChecksumCRC32C": r1["ChecksumCRC32C"]},
                {"PartNumber": 2, "ETag": r2["ETag"], "ChecksumCRC32C": r2["ChecksumCRC32C"]},
                {"PartNumber": 3, "ETag": r3["CopyPartResult"]["ETag"],
                 "ChecksumCRC32C": local_checksum("CRC32C", p3)},
                {"PartNumber": 4, "ETag": r4["ETag"], "ChecksumCRC32C": r4["ChecksumCRC32C"]}]})
        whole = p1 + p2 + p3 + p4
        equal("complete_multipart_upload: ETag", multipart_etag([p1, p2, p3, p4]), done["ETag"])
        equal("complete_multipart_upload: composite CRC32C",
              composite_checksum("CRC32C", [p1, p2, p3, p4]), done.get("ChecksumCRC32C"))
        g, got = self.get(key)
        same_bytes("the completed upload: bytes", whole, got)
        equal("the completed upload: metadata", {"kind": "explicit"}, g["Metadata"])
        equal("the completed upload: Content-Type", "x/mpu", g["ContentType"])
        same_bytes("the completed upload: in the under store", whole,
                   self.under_store_bytes(self.bucket, key))
        g, got = self.get(key, PartNumber=2)
        same_bytes("get of part 2 of the completed upload", p2, got)
        equal("get of part 2: parts count and range",
              (4, 206, f"bytes {len(p1)}-{len(p1) + len(p2) - 1}/{len(whole)}"),
              (g.get("PartsCount"), g["ResponseMetadata"]["HTTPStatusCode"],
               g.get("ContentRange")))
        h = s3.head_object(Bucket=self.bucket, Key=key, PartNumber=4)
        equal("head of part 4: its length", len(p4), h["ContentLength"])
        fails("get of part 5 of 4", lambda: self.get(key, PartNumber=5),
              "InvalidPartNumber", 416)
        g, got = self.get("mpu/source.bin", PartNumber=1)
        same_bytes("get of part 1 of an object not uploaded in parts: all of it", source, got)
        check("get of part 1 of an object not uploaded in parts: no parts count",
              "PartsCount" not in g, f"got {g.get('PartsCount')}")
        fails("get of part 2 of an object not uploaded in parts",
              lambda: self.get("mpu/source.bin", PartNumber=2), "InvalidPartNumber", 416)
        uploads = s3.list_multipart_uploads(Bucket=self.bucket, Prefix="mpu/")
        equal("list_multipart_uploads: none left", [], uploads.get("Uploads", []))
        fails("list_parts of a completed upload",
              lambda: s3.list_parts(Bucket=self.bucket, Key=key, UploadId=upload_id),
              "NoSuchUpload", 404)

        up = s3.create_multipart_upload(Bucket=self.bucket, Key="mpu/aborted")
        s3.upload_part(Bucket=self.bucket, Key="mpu/aborted", UploadId=up["UploadId"],
                       PartNumber=1, Body=b"some bytes")
        r = s3.abort_multipart_upload(Bucket=self.bucket, Key="mpu/aborted",
                                      UploadId=up["UploadId"])
        equal("abort_multipart_upload answers 204", 204, r["ResponseMetadata"]["HTTPStatusCode"])
        fails("list_parts of an aborted upload",
              lambda: s3.list_parts(Bucket=self.bucket, Key="mpu/aborted",
                                    UploadId=up["UploadId"]), "NoSuchUpload", 404)
        fails("the aborted upload left no object",
              lambda: s3.head_object(Bucket=self.bucket, Key="mpu/aborted"), "404", 404)
        equal("list_multipart_uploads after the abort", [],
              s3.list_multipart_uploads(Bucket=self.bucket).get("Uploads", []))
        fails("upload_part to an unknown upload",
              lambda: s3.upload_part(Bucket=self.bucket, Key="mpu/aborted", UploadId="nope",
                                     PartNumber=1, Body=b"x"), "NoSuchUpload", 404)

        # Uploads of one key are listed in the order they were started.
        started = []
        for k in ("mpu/list/c", "mpu/list/b", "mpu/list/a", "mpu/list/b"):
            started.append((k, s3.create_multipart_upload(Bucket=self.bucket,
                                                          Key=k)["UploadId"]))
            time.sleep(0.01)
        started.sort(key=lambda u: u[0])
        pages = list(s3.get_paginator("list_multipart_uploads").paginate(
            Bucket=self.bucket, Prefix="mpu/list/", PaginationConfig={"PageSize": 3}))
        listed = [(u["Key"], u["UploadId"]) for p in pages for u in p.get("Uploads", [])]
        check("list_multipart_uploads paginator: two pages", len(pages) == 2,
              f"got {len(pages)} pages")
        equal("list_multipart_uploads paginator: every upload once, by key, then as started",
              started, listed)
        for k, upload_id in started:
            s3.abort_multipart_upload(Bucket=self.bucket, Key=k, UploadId=upload_id)
        equal("list_multipart_uploads after aborting them", [],
              s3.list_multipart_uploads(Bucket=self.bucket).get("Uploads", []))

    # -- presigned URLs --------------------------------------------------------------------

    def presigned(self):
        s3 = self.s3
        body = data(100_000, 70)
        s3.put_object(Bucket=self.bucket, Key="presigned/get", Body=body)
        url = s3.generate_presigned_url("get_object", Params={"Bucket": self.bucket,
                                                              "Key": "presigned/get"},
                                        ExpiresIn=300)
        with urllib.request.urlopen(url, timeout=30) as r:
            same_bytes("presigned GET with urllib", body, r.read())
        url = s3.generate_presigned_url("get_object", Params={
            "Bucket": self.bucket, "Key": "presigned/get",
            "ResponseContentDisposition": "attachment; filename=x.bin"}, ExpiresIn=300)
        with urllib.request.urlopen(url, timeout=30) as r:
            equal("presigned GET with a response-content-disposition override",
                  "attachment; filename=x.bin", r.headers.get("Content-Disposition"))
        tampered = url.replace("presigned/get", "presigned/other")
        status = http_status(urllib.request.Request(tampered))
        equal("presigned GET of another key than signed: 403", 403, status)

        put_body = data(65_000, 71)
        url = s3.generate_presigned_url("put_object", Params={"Bucket": self.bucket,
                                                              "Key": "presigned/put"},
                                        ExpiresIn=300)
        request = urllib.request.Request(url, data=put_body, method="PUT")
        with urllib.request.urlopen(request, timeout=30) as r:
            equal("presigned PUT with urllib: 200 and the MD5 ETag", (200, md5_etag(put_body)),
                  (r.status, r.headers.get("ETag")))
        same_bytes("presigned PUT: read back", put_body, self.get("presigned/put")[1])
        same_bytes("presigned PUT: in the under store", put_body,
                   self.under_store_bytes(self.bucket, "presigned/put"))

        url = s3.generate_presigned_url("get_object", Params={"Bucket": self.bucket,
                                                              "Key": "presigned/get"},
                                        ExpiresIn=1)
        time.sleep(2.1)
        equal("an expired presigned GET: 403", 403, http_status(urllib.request.Request(url)))
        self.presigned_with_default_config()

    def presigned_with_default_config(self):
        """generate_presigned_url as a script that sets no signature_version gets it.

        boto3 then presigns for a custom endpoint with Signature Version 2 (AWSAccessKeyId,
        Signature, Expires), which the proxy accepts as S3 does.
        """
        default = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.key,
                               aws_secret_access_key=self.secret, region_name="us-east-1")
        body = data(80_000, 72)
        self.s3.put_object(Bucket=self.bucket, Key="presigned/v2 get", Body=body)
        url = default.generate_presigned_url("get_object", Params={"Bucket": self.bucket,
                                                                   "Key": "presigned/v2 get"},
                                             ExpiresIn=300)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        check("default config: the presigned URL is of Signature Version 2",
              {"AWSAccessKeyId", "Signature", "Expires"} <= set(query), url)
        with urllib.request.urlopen(url, timeout=30) as r:
            same_bytes("default config: presigned get_object", body, r.read())

        put_body = data(60_000, 73)
        url = default.generate_presigned_url("put_object", Params={
            "Bucket": self.bucket, "Key": "presigned/v2 put"}, ExpiresIn=300)
        # urllib would add a Content-Type of its own, which the URL does not sign (S3 refuses
        # that too): the body goes without one.
        parts = urllib.parse.urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            connection.request("PUT", f"{parts.path}?{parts.query}", body=put_body,
                               headers={"Content-Length": str(len(put_body))})
            r = connection.getresponse()
            answer = r.read()
            equal("default config: presigned put_object: 200 and the MD5 ETag",
                  (200, md5_etag(put_body)), (r.status, r.getheader("ETag")))
        finally:
            connection.close()
        same_bytes("default config: presigned put_object: in the under store", put_body,
                   self.under_store_bytes(self.bucket, "presigned/v2 put"))

        typed_body = data(30_000, 74)
        url = default.generate_presigned_url("put_object", Params={
            "Bucket": self.bucket, "Key": "presigned/v2 typed", "ContentType": "text/csv"},
            ExpiresIn=300)
        request = urllib.request.Request(url, data=typed_body, method="PUT",
                                         headers={"Content-Type": "text/csv"})
        with urllib.request.urlopen(request, timeout=30) as r:
            equal("default config: presigned put_object with a ContentType: 200", 200, r.status)
        g, got = self.get("presigned/v2 typed")
        same_bytes("default config: presigned put_object with a ContentType: read back",
                   typed_body, got)
        equal("default config: presigned put_object keeps the Content-Type", "text/csv",
              g["ContentType"])
        request = urllib.request.Request(url, data=typed_body, method="PUT",
                                         headers={"Content-Type": "text/html"})
        equal("default config: presigned put_object with another Content-Type than signed: 403",
              403, http_status(request))

        # Already expired when made: refused with 403 AccessDenied, whatever the method.
        url = default.generate_presigned_url("get_object", Params={"Bucket": self.bucket,
                                                                   "Key": "presigned/v2 get"},
                                             ExpiresIn=-60)
        equal("default config: an expired presigned get_object: 403", 403,
              http_status(urllib.request.Request(url)))
        url = default.generate_presigned_url("put_object", Params={
            "Bucket": self.bucket, "Key": "presigned/v2 late"}, ExpiresIn=-60)
        request = urllib.request.Request(url, data=b"late", method="PUT",
                                         headers={"Content-Type": ""})
        try:
            urllib.request.urlopen(request, timeout=30).close()
            raise CheckFailed("default config: an expired presigned put_object succeeded")
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            check("default config: an expired presigned put_object: 403 AccessDenied, expired",
                  e.code == 403 and "<Code>AccessDenied</Code>" in text
                  and "Request has expired" in text, f"{e.code}: {text}")
        fails("default config: the expired put wrote nothing",
              lambda: self.s3.head_object(Bucket=self.bucket, Key="presigned/v2 late"),
              "404", 404)

    def credentials(self):
        stranger = make_client(self.endpoint, "AKNOSUCHKEY000000000", self.secret)
        fails("an unknown access key", lambda: stranger.list_objects_v2(Bucket=self.bucket),
              "InvalidAccessKeyId", 403)
        wrong = make_client(self.endpoint, self.key, "not-the-secret")
        fails("a wrong secret", lambda: wrong.list_objects_v2(Bucket=self.bucket),
              "SignatureDoesNotMatch", 403)
        anonymous = boto3.client(
            "s3", endpoint_url=self.endpoint, region_name="us-east-1",
            config=Config(signature_version=botocore.UNSIGNED, s3={"addressing_style": "path"},
                          retries={"total_max_attempts": 1}))
        fails("an anonymous get", lambda: anonymous.get_object(Bucket=self.bucket,
                                                               Key="presigned/get"),
              "AccessDenied", 403)

    def cleanup(self):
        s3 = self.s3
        fails("delete_bucket of a bucket with objects",
              lambda: s3.delete_bucket(Bucket=self.bucket), "BucketNotEmpty", 409)
        # The first bucket is emptied through its object listing; the second as cleanup scripts
        # empty a bucket that may hold versions, through its version listing.
        keys = [{"Key": o["Key"]} for p in s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket) for o in p.get("Contents", [])]
        versions = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                    for p in s3.get_paginator("list_object_versions").paginate(
                        Bucket=self.bucket2, PaginationConfig={"PageSize": 2})
                    for v in p.get("Versions", []) + p.get("DeleteMarkers", [])]
        check("list_object_versions: every object once, as its version null",
              len(versions) > 0 and all(v["VersionId"] == "null" for v in versions)
              and len({v["Key"] for v in versions}) == len(versions), f"got {versions}")
        for bucket, objects in ((self.bucket, keys), (self.bucket2, versions)):
            for i in range(0, len(objects), 1000):
                r = s3.delete_objects(Bucket=bucket, Delete={
                    "Quiet": True, "Objects": objects[i:i + 1000]})
                equal(f"empty {bucket}: no errors", [], r.get("Errors", []))
            r = s3.delete_bucket(Bucket=bucket)
            equal(f"delete_bucket {bucket} answers 204", 204,
                  r["ResponseMetadata"]["HTTPStatusCode"])
            fails(f"head_bucket of the deleted {bucket}",
                  lambda: s3.head_bucket(Bucket=bucket), "404", 404)
            check(f"the deleted {bucket} is gone from the under store",
                  not os.path.exists(os.path.join(self.under_store, bucket)))


def http_status(request):
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    endpoint, key, secret, bucket, under_store = argv[1:]
    started = time.monotonic()
    try:
        Script(endpoint, key, secret, bucket, under_store).run()
    except CheckFailed as e:
        print(f"FAIL {e}", flush=True)
        return 1
    except Exception:
        print("FAIL unexpected error:\n" + traceback.format_exc(), flush=True)
        return 1
    print(f"all checks passed in {time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
