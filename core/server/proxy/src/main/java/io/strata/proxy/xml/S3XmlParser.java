package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Parses the XML documents clients send to S3 into records, validating them as S3 does, and
 * refusing anything else with the S3 error a client expects (MalformedXML for a document that is
 * not well-formed, is too large, has the wrong shape or declares a DTD). Element names are matched
 * by local name, with or without S3's namespace; elements S3 does not define are ignored, so fields
 * that newer SDKs add do not break older proxies.
 *
 * <p>Each document has a size limit, checked before parsing; the HTTP layer should refuse a larger
 * Content-Length before reading the body. The limits are comfortably above the largest document a
 * client can legitimately send.
 */
public final class S3XmlParser {
  /** S3's message for MalformedXML; the detail of what was wrong follows it. */
  static final String MALFORMED = S3ErrorCode.MALFORMED_XML.defaultMessage();

  /** 10,000 parts of about 200 bytes each, with room for indentation. */
  public static final int MAX_COMPLETE_MULTIPART_UPLOAD_BYTES = 4 << 20;

  /** 1,000 keys of up to 1,024 bytes each, escaped, with version ids. */
  public static final int MAX_DELETE_BYTES = 2 << 20;

  /** Ten tags are a few kilobytes; the bound is generous. */
  public static final int MAX_TAGGING_BYTES = 1 << 20;

  public static final int MAX_CREATE_BUCKET_CONFIGURATION_BYTES = 1 << 20;

  /** An ACL of a hundred grants is a few tens of kilobytes. */
  public static final int MAX_ACCESS_CONTROL_POLICY_BYTES = 1 << 20;

  /** S3's bound on a CORS configuration. */
  public static final int MAX_CORS_BYTES = 64 << 10;

  public static final int MAX_VERSIONING_CONFIGURATION_BYTES = 64 << 10;

  /** A thousand rules of a few hundred bytes each, with room to spare. */
  public static final int MAX_LIFECYCLE_BYTES = 1 << 20;

  private S3XmlParser() {}

  /**
   * Parses the body of CompleteMultipartUpload.
   *
   * @throws S3Exception MALFORMED_XML (including for no part and a part without PartNumber or
   *     ETag), INVALID_ARGUMENT for a part number outside 1 to 10000, INVALID_PART_ORDER when the
   *     part numbers are not strictly ascending
   */
  public static CompleteMultipartUpload completeMultipartUpload(byte[] document) {
    XmlNode root =
        XmlIn.parse(document, MAX_COMPLETE_MULTIPART_UPLOAD_BYTES, "CompleteMultipartUpload");
    List<XmlNode> partNodes = root.all("Part");
    if (partNodes.isEmpty()) {
      throw malformed("<CompleteMultipartUpload> lists no <Part>");
    }
    List<CompleteMultipartUpload.Part> parts = new ArrayList<>(partNodes.size());
    int previous = 0;
    for (int i = 0; i < partNodes.size(); i++) {
      XmlNode node = partNodes.get(i);
      String where = "<Part> " + (i + 1);
      String numberText = node.required("PartNumber", where).leafText().trim();
      int number;
      try {
        number = Integer.parseInt(numberText);
      } catch (NumberFormatException e) {
        throw malformed(where + " has PartNumber '" + numberText + "', not an integer");
      }
      if (number < 1 || number > CompleteMultipartUpload.MAX_PART_NUMBER) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "Part number must be an integer "
                + "between 1 and "
                + CompleteMultipartUpload.MAX_PART_NUMBER
                + ", inclusive; "
                + where
                + " has "
                + number
                + ".");
      }
      if (number <= previous) {
        throw new S3Exception(
            S3ErrorCode.INVALID_PART_ORDER,
            "The list of parts was not in "
                + "ascending order. Parts must be ordered by part number: part "
                + number
                + " follows part "
                + previous
                + ".");
      }
      previous = number;
      String etag = unquote(node.required("ETag", where).leafText().trim());
      Map<ChecksumAlgorithm, String> checksums = new EnumMap<>(ChecksumAlgorithm.class);
      for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
        XmlNode c = node.optional(a.xmlElement());
        if (c != null) {
          checksums.put(a, c.leafText().trim());
        }
      }
      parts.add(new CompleteMultipartUpload.Part(number, etag, checksums));
    }
    return new CompleteMultipartUpload(parts);
  }

  /**
   * Parses the body of DeleteObjects.
   *
   * @throws S3Exception MALFORMED_XML for no object, more than 1000, an object without a Key, or a
   *     Quiet that is neither true nor false
   */
  public static DeleteRequest deleteRequest(byte[] document) {
    XmlNode root = XmlIn.parse(document, MAX_DELETE_BYTES, "Delete");
    boolean quiet = false;
    XmlNode quietNode = root.optional("Quiet");
    if (quietNode != null) {
      String q = quietNode.leafText().trim().toLowerCase(Locale.ROOT);
      if (!q.equals("true") && !q.equals("false")) {
        throw malformed("<Quiet> is '" + quietNode.text() + "', not true or false");
      }
      quiet = q.equals("true");
    }
    List<XmlNode> objectNodes = root.all("Object");
    if (objectNodes.isEmpty()) {
      throw malformed("<Delete> names no <Object>");
    }
    if (objectNodes.size() > DeleteRequest.MAX_OBJECTS) {
      throw malformed(
          "<Delete> names "
              + objectNodes.size()
              + " objects, more than the "
              + DeleteRequest.MAX_OBJECTS
              + " allowed in one request");
    }
    List<DeleteRequest.ObjectId> objects = new ArrayList<>(objectNodes.size());
    for (int i = 0; i < objectNodes.size(); i++) {
      XmlNode node = objectNodes.get(i);
      String key = node.required("Key", "<Object> " + (i + 1)).leafText();
      XmlNode version = node.optional("VersionId");
      XmlNode etag = node.optional("ETag");
      objects.add(
          new DeleteRequest.ObjectId(
              key,
              version == null ? Optional.empty() : Optional.of(version.leafText().trim()),
              etag == null ? Optional.empty() : Optional.of(etag.leafText().trim())));
    }
    return new DeleteRequest(quiet, objects);
  }

  /**
   * Parses the body of PutObjectTagging. An empty TagSet is allowed (it removes every tag).
   *
   * @throws S3Exception MALFORMED_XML for no TagSet or a Tag without Key or Value, InvalidTag (code
   *     {@link S3ErrorCode#INVALID_TAG}) when a tag rule is broken
   */
  public static TagSet tagging(byte[] document) {
    return new TagSet(tags(document));
  }

  /**
   * Parses the body of PutBucketTagging: a Tagging document as for objects, with up to {@link
   * BucketTags#MAX_TAGS} tags. An empty TagSet is allowed (it removes every tag).
   *
   * @throws S3Exception MALFORMED_XML for no TagSet or a Tag without Key or Value, InvalidTag when
   *     a tag rule is broken
   */
  public static BucketTags bucketTagging(byte[] document) {
    return new BucketTags(tags(document));
  }

  private static List<TagSet.Tag> tags(byte[] document) {
    XmlNode root = XmlIn.parse(document, MAX_TAGGING_BYTES, "Tagging");
    XmlNode tagSet = root.required("TagSet", "<Tagging>");
    List<TagSet.Tag> tags = new ArrayList<>();
    List<XmlNode> tagNodes = tagSet.all("Tag");
    for (int i = 0; i < tagNodes.size(); i++) {
      XmlNode node = tagNodes.get(i);
      String where = "<Tag> " + (i + 1);
      tags.add(
          new TagSet.Tag(
              node.required("Key", where).leafText(), node.required("Value", where).leafText()));
    }
    return tags;
  }

  /**
   * Parses the body of PutBucketCors (and the configuration as the bucket keeps it).
   *
   * @throws S3Exception MALFORMED_XML for no rule, a rule without an origin or a method, or a
   *     MaxAgeSeconds that is not a whole number; InvalidRequest when a value breaks S3's rules
   *     ({@link CorsConfiguration})
   */
  public static CorsConfiguration corsConfiguration(byte[] document) {
    XmlNode root = XmlIn.parse(document, MAX_CORS_BYTES, "CORSConfiguration");
    List<CorsConfiguration.Rule> rules = new ArrayList<>();
    for (XmlNode node : root.all("CORSRule")) {
      XmlNode id = node.optional("ID");
      XmlNode maxAge = node.optional("MaxAgeSeconds");
      Integer maxAgeSeconds = null;
      if (maxAge != null) {
        String text = maxAge.leafText().trim();
        try {
          maxAgeSeconds = Integer.parseInt(text);
        } catch (NumberFormatException e) {
          throw malformed("<MaxAgeSeconds> is '" + text + "', not a whole number of seconds");
        }
      }
      rules.add(
          new CorsConfiguration.Rule(
              id == null ? null : id.leafText().trim(),
              texts(node, "AllowedOrigin"),
              texts(node, "AllowedMethod"),
              texts(node, "AllowedHeader"),
              texts(node, "ExposeHeader"),
              maxAgeSeconds));
    }
    return new CorsConfiguration(rules);
  }

  /**
   * Parses the body of PutBucketLifecycleConfiguration (and of the older PutBucketLifecycle, whose
   * rules name a prefix directly), and the configuration as the bucket keeps it.
   *
   * @throws S3Exception MALFORMED_XML for a document of the wrong shape; INVALID_ARGUMENT when a
   *     value breaks S3's rules ({@link LifecycleConfiguration}); NOT_IMPLEMENTED for transitions
   */
  public static LifecycleConfiguration lifecycleConfiguration(byte[] document) {
    return LifecycleConfiguration.parse(
        XmlIn.parse(document, MAX_LIFECYCLE_BYTES, "LifecycleConfiguration"));
  }

  private static List<String> texts(XmlNode parent, String name) {
    return parent.all(name).stream().map(n -> n.leafText().trim()).toList();
  }

  /**
   * Parses the body of CreateBucket, which may be empty (no location constraint).
   *
   * @throws S3Exception MALFORMED_XML for a body that is not a CreateBucketConfiguration
   */
  public static BucketConfiguration createBucketConfiguration(byte[] document) {
    if (isBlank(document)) {
      return new BucketConfiguration(Optional.empty());
    }
    XmlNode root =
        XmlIn.parse(document, MAX_CREATE_BUCKET_CONFIGURATION_BYTES, "CreateBucketConfiguration");
    XmlNode location = root.optional("LocationConstraint");
    String region = location == null ? "" : location.leafText().trim();
    return new BucketConfiguration(region.isEmpty() ? Optional.empty() : Optional.of(region));
  }

  /**
   * Parses the body of PutBucketAcl or PutObjectAcl. A grantee is told apart by what names it, as
   * its {@code xsi:type} would say: {@code <ID>}, {@code <URI>} or {@code <EmailAddress>}.
   *
   * @throws S3Exception MalformedACLError for a grant without a grantee or permission
   */
  public static AccessControlPolicy accessControlPolicy(byte[] document) {
    XmlNode root = XmlIn.parse(document, MAX_ACCESS_CONTROL_POLICY_BYTES, "AccessControlPolicy");
    XmlNode ownerNode = root.optional("Owner");
    XmlNode ownerId = ownerNode == null ? null : ownerNode.optional("ID");
    Owner owner = new Owner(ownerId == null ? "" : ownerId.leafText().trim(), null);
    List<AccessControlPolicy.Grant> grants = new ArrayList<>();
    XmlNode list = root.optional("AccessControlList");
    List<XmlNode> grantNodes = list == null ? List.of() : list.all("Grant");
    for (XmlNode g : grantNodes) {
      XmlNode grantee = g.optional("Grantee");
      XmlNode permission = g.optional("Permission");
      if (grantee == null || permission == null) {
        throw new S3Exception(
            S3ErrorCode.MALFORMED_ACL_ERROR,
            "Each <Grant> of the ACL needs a <Grantee> and a <Permission>");
      }
      grants.add(
          new AccessControlPolicy.Grant(
              permission.leafText().trim(),
              text(grantee.optional("ID")),
              text(grantee.optional("URI")),
              text(grantee.optional("EmailAddress"))));
    }
    return new AccessControlPolicy(owner, grants);
  }

  private static String text(XmlNode node) {
    return node == null ? "" : node.leafText().trim();
  }

  /**
   * Parses the body of PutBucketVersioning: its Status ({@code Enabled} or {@code Suspended}) and
   * MfaDelete ({@code Enabled}, {@code Disabled}, or empty when not given).
   *
   * @throws S3Exception MALFORMED_XML for a body that is not a VersioningConfiguration with a
   *     Status of one of those values
   */
  public static VersioningConfiguration versioningConfiguration(byte[] document) {
    XmlNode root =
        XmlIn.parse(document, MAX_VERSIONING_CONFIGURATION_BYTES, "VersioningConfiguration");
    XmlNode status = root.optional("Status");
    String s = status == null ? "" : status.leafText().trim();
    if (!s.equals("Enabled") && !s.equals("Suspended")) {
      throw malformed(
          "the VersioningConfiguration's Status must be Enabled or Suspended, not '" + s + "'");
    }
    XmlNode mfa = root.optional("MfaDelete");
    String m = mfa == null ? "" : mfa.leafText().trim();
    if (!m.isEmpty() && !m.equals("Enabled") && !m.equals("Disabled")) {
      throw malformed("the VersioningConfiguration's MfaDelete must be Enabled or Disabled");
    }
    return new VersioningConfiguration(s, m);
  }

  static S3Exception malformed(String detail) {
    return new S3Exception(S3ErrorCode.MALFORMED_XML, MALFORMED + " " + capitalize(detail) + ".");
  }

  private static String capitalize(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  private static boolean isBlank(byte[] document) {
    for (byte b : document) {
      if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
        return false;
      }
    }
    return true;
  }

  private static String unquote(String etag) {
    return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")
        ? etag.substring(1, etag.length() - 1)
        : etag;
  }
}
