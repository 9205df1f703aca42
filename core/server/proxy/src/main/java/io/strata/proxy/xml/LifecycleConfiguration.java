package io.strata.proxy.xml;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A bucket's lifecycle configuration: the expiration rules S3 defines (current versions after some
 * days or on a date, noncurrent versions some days after they were replaced, delete markers left
 * alone, and multipart uploads left incomplete), each for the objects its filter selects. Every
 * instance obeys S3's rules for the document: 1 to 1,000 rules with distinct IDs of at most 255
 * characters, each with at least one action; whole positive days; a date at midnight UTC; neither
 * an expired-delete-marker action nor an abort of uploads with a tag filter (tags belong to
 * objects, not to markers or uploads). Transitions between storage classes are refused as not
 * implemented: Strata has one storage class, and what is cached where follows the reads.
 */
public record LifecycleConfiguration(List<Rule> rules) {
  public static final int MAX_RULES = 1000;
  public static final int MAX_ID_LENGTH = 255;

  /** S3's bound on NewerNoncurrentVersions. */
  public static final int MAX_NEWER_NONCURRENT = 100;

  public LifecycleConfiguration {
    rules = List.copyOf(rules);
    if (rules.isEmpty()) {
      throw S3XmlParser.malformed("<LifecycleConfiguration> holds no <Rule>");
    }
    if (rules.size() > MAX_RULES) {
      throw invalid(
          "The lifecycle configuration has "
              + rules.size()
              + " rules; S3 allows "
              + MAX_RULES
              + " at most");
    }
    Set<String> ids = new HashSet<>();
    for (Rule r : rules) {
      if (r.id() != null && !ids.add(r.id())) {
        throw invalid("Rule ID must be unique. Found same ID for more than one rule: " + r.id());
      }
    }
  }

  /**
   * Which objects a rule applies to: all of these that are given (a null or empty one selects all).
   *
   * @param prefix keys start with it
   * @param tags the object has each of these tags
   * @param sizeGreaterThan the object is larger than this many bytes
   * @param sizeLessThan the object is smaller than this many bytes
   * @param legacyPrefix whether the rule named its prefix directly, as the older PutBucketLifecycle
   *     did, rather than in a {@code <Filter>}: GetBucketLifecycleConfiguration answers it so
   */
  public record Filter(
      String prefix,
      List<TagSet.Tag> tags,
      Long sizeGreaterThan,
      Long sizeLessThan,
      boolean legacyPrefix) {
    public static final Filter ALL = new Filter("", List.of(), null, null, false);

    public Filter {
      prefix = prefix == null ? "" : prefix;
      tags = List.copyOf(tags);
      if ((sizeGreaterThan != null && sizeGreaterThan < 0)
          || (sizeLessThan != null && sizeLessThan <= 0)) {
        throw invalid(
            "ObjectSizeGreaterThan must be 0 or more and ObjectSizeLessThan more than 0 bytes");
      }
      if (sizeGreaterThan != null && sizeLessThan != null && sizeGreaterThan >= sizeLessThan) {
        throw invalid(
            "ObjectSizeGreaterThan ("
                + sizeGreaterThan
                + ") must be less than ObjectSizeLessThan ("
                + sizeLessThan
                + ")");
      }
    }

    /** Whether an object of {@code key}, {@code size} bytes and {@code objectTags} is selected. */
    public boolean matches(String key, long size, TagSet objectTags) {
      if (!key.startsWith(prefix)) {
        return false;
      }
      if (sizeGreaterThan != null && size <= sizeGreaterThan) {
        return false;
      }
      if (sizeLessThan != null && size >= sizeLessThan) {
        return false;
      }
      if (!tags.isEmpty()) {
        var have = objectTags.asMap();
        for (TagSet.Tag t : tags) {
          if (!t.value().equals(have.get(t.key()))) {
            return false;
          }
        }
      }
      return true;
    }

    /** Whether the filter names only a prefix, so it can select uploads and delete markers. */
    boolean prefixOnly() {
      return tags.isEmpty() && sizeGreaterThan == null && sizeLessThan == null;
    }
  }

  /**
   * One rule.
   *
   * @param id the rule's ID, or null
   * @param enabled {@code Status} is Enabled (a Disabled rule is kept and does nothing)
   * @param expirationDays current versions expire this many days after they were written, or null
   * @param expirationDate current versions expire at this midnight UTC, or null
   * @param expiredObjectDeleteMarker a delete marker that is a key's only version is removed
   * @param noncurrentDays noncurrent versions expire this many days after they were replaced, or
   *     null
   * @param newerNoncurrentVersions that many newest noncurrent versions of a key are kept whatever
   *     their age, or null
   * @param abortDays multipart uploads left incomplete this many days after they started are
   *     aborted, or null
   */
  public record Rule(
      String id,
      boolean enabled,
      Filter filter,
      Integer expirationDays,
      Instant expirationDate,
      boolean expiredObjectDeleteMarker,
      Integer noncurrentDays,
      Integer newerNoncurrentVersions,
      Integer abortDays) {
    public Rule {
      String named = id == null ? "a rule" : "the rule '" + id + "'";
      if (id != null && id.codePointCount(0, id.length()) > MAX_ID_LENGTH) {
        throw invalid(
            "The rule ID '" + id + "' is longer than " + MAX_ID_LENGTH + " characters: shorten it");
      }
      if (expirationDays == null
          && expirationDate == null
          && !expiredObjectDeleteMarker
          && noncurrentDays == null
          && abortDays == null) {
        throw invalid(
            "At least one action needs to be specified in a rule: "
                + named
                + " has no Expiration, NoncurrentVersionExpiration or"
                + " AbortIncompleteMultipartUpload");
      }
      if (!filter.tags().isEmpty() && expiredObjectDeleteMarker) {
        throw invalid(
            "ExpiredObjectDeleteMarker cannot be specified with object tags ("
                + named
                + "): delete markers have no tags");
      }
      if (!filter.prefixOnly() && abortDays != null) {
        throw invalid(
            "AbortIncompleteMultipartUpload cannot be specified with object tags or sizes ("
                + named
                + "): an upload has neither until it completes; filter it by prefix only");
      }
      if (newerNoncurrentVersions != null && noncurrentDays == null) {
        throw S3XmlParser.malformed(
            "<NoncurrentVersionExpiration> of " + named + " has no <NoncurrentDays>");
      }
    }

    boolean hasExpiration() {
      return expirationDays != null || expirationDate != null || expiredObjectDeleteMarker;
    }
  }

  /** Parses a {@code <LifecycleConfiguration>} element (from {@link S3XmlParser}). */
  static LifecycleConfiguration parse(XmlNode root) {
    List<Rule> rules = new ArrayList<>();
    for (XmlNode node : root.all("Rule")) {
      rules.add(rule(node, rules.size() + 1));
    }
    return new LifecycleConfiguration(rules);
  }

  private static Rule rule(XmlNode node, int number) {
    XmlNode idNode = node.optional("ID");
    String id = idNode == null ? null : idNode.leafText().trim();
    String where = id == null ? "<Rule> " + number : "<Rule> '" + id + "'";
    for (String transition : List.of("Transition", "NoncurrentVersionTransition")) {
      if (node.optional(transition) != null) {
        throw new S3Exception(
            S3ErrorCode.NOT_IMPLEMENTED,
            where
                + " has a <"
                + transition
                + ">: Strata has one storage class, so there is nothing to move objects to (the"
                + " cache keeps what is read); remove it and keep the expiration actions");
      }
    }
    String status = node.required("Status", where).leafText().trim();
    if (!status.equals("Enabled") && !status.equals("Disabled")) {
      throw S3XmlParser.malformed(where + " has Status '" + status + "', not Enabled or Disabled");
    }
    XmlNode legacy = node.optional("Prefix");
    XmlNode filterNode = node.optional("Filter");
    if (legacy != null && filterNode != null) {
      throw S3XmlParser.malformed(where + " has both <Prefix> and <Filter>: give one");
    }
    Filter filter =
        legacy != null
            ? new Filter(legacy.leafText(), List.of(), null, null, true)
            : filterNode == null ? Filter.ALL : filter(filterNode, where);
    Integer expirationDays = null;
    Instant expirationDate = null;
    boolean expiredMarker = false;
    XmlNode expiration = node.optional("Expiration");
    if (expiration != null) {
      XmlNode days = expiration.optional("Days");
      XmlNode date = expiration.optional("Date");
      XmlNode marker = expiration.optional("ExpiredObjectDeleteMarker");
      int given = (days == null ? 0 : 1) + (date == null ? 0 : 1) + (marker == null ? 0 : 1);
      if (given != 1) {
        throw S3XmlParser.malformed(
            "<Expiration> of "
                + where
                + " must hold exactly one of <Days>, <Date> and <ExpiredObjectDeleteMarker>");
      }
      if (days != null) {
        expirationDays = positiveDays(days, "Expiration", where);
      } else if (date != null) {
        expirationDate = midnight(date.leafText().trim(), where);
      } else {
        String v = marker.leafText().trim();
        if (!v.equals("true") && !v.equals("false")) {
          throw S3XmlParser.malformed(
              "<ExpiredObjectDeleteMarker> of " + where + " is '" + v + "', not true or false");
        }
        expiredMarker = v.equals("true");
      }
    }
    Integer noncurrentDays = null;
    Integer newer = null;
    XmlNode noncurrent = node.optional("NoncurrentVersionExpiration");
    if (noncurrent != null) {
      XmlNode days = noncurrent.optional("NoncurrentDays");
      if (days != null) {
        noncurrentDays = positiveDays(days, "NoncurrentVersionExpiration", where);
      }
      XmlNode n = noncurrent.optional("NewerNoncurrentVersions");
      if (n != null) {
        newer = wholeNumber(n, where);
        if (newer < 1 || newer > MAX_NEWER_NONCURRENT) {
          throw invalid(
              "NewerNoncurrentVersions of "
                  + where
                  + " is "
                  + newer
                  + "; it must be between 1 and "
                  + MAX_NEWER_NONCURRENT);
        }
      }
      if (days == null && n == null) {
        throw S3XmlParser.malformed("<NoncurrentVersionExpiration> of " + where + " is empty");
      }
    }
    Integer abortDays = null;
    XmlNode abort = node.optional("AbortIncompleteMultipartUpload");
    if (abort != null) {
      abortDays =
          positiveDays(
              abort.required("DaysAfterInitiation", "<AbortIncompleteMultipartUpload> of " + where),
              "AbortIncompleteMultipartUpload",
              where);
    }
    return new Rule(
        id,
        status.equals("Enabled"),
        filter,
        expirationDays,
        expirationDate,
        expiredMarker,
        noncurrentDays,
        newer,
        abortDays);
  }

  private static Filter filter(XmlNode node, String where) {
    XmlNode and = node.optional("And");
    List<XmlNode> direct = new ArrayList<>();
    for (String name : List.of("Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan")) {
      direct.addAll(node.all(name));
    }
    if ((and != null && !direct.isEmpty()) || direct.size() > 1) {
      throw S3XmlParser.malformed(
          "<Filter> of "
              + where
              + " names more than one condition outside <And>: put them in one <And>");
    }
    XmlNode from = and != null ? and : node;
    XmlNode prefix = from.optional("Prefix");
    List<TagSet.Tag> tags = new ArrayList<>();
    for (XmlNode t : from.all("Tag")) {
      tags.add(
          new TagSet.Tag(
              t.required("Key", "<Tag> of " + where).leafText(),
              t.required("Value", "<Tag> of " + where).leafText()));
    }
    XmlNode greater = from.optional("ObjectSizeGreaterThan");
    XmlNode less = from.optional("ObjectSizeLessThan");
    return new Filter(
        prefix == null ? "" : prefix.leafText(),
        tags,
        greater == null ? null : bytes(greater, where),
        less == null ? null : bytes(less, where),
        false);
  }

  private static int positiveDays(XmlNode n, String action, String where) {
    int days = wholeNumber(n, where);
    if (days <= 0) {
      throw invalid(
          "'"
              + n.name()
              + "' for "
              + action
              + " action of "
              + where
              + " must be a positive integer, not "
              + days);
    }
    return days;
  }

  private static int wholeNumber(XmlNode n, String where) {
    String text = n.leafText().trim();
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw S3XmlParser.malformed(
          "<" + n.name() + "> of " + where + " is '" + text + "', not a whole number");
    }
  }

  private static long bytes(XmlNode n, String where) {
    String text = n.leafText().trim();
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw S3XmlParser.malformed(
          "<" + n.name() + "> of " + where + " is '" + text + "', not a number of bytes");
    }
  }

  /** An ISO 8601 date (a bare day is midnight UTC), which S3 requires to be midnight UTC. */
  private static Instant midnight(String text, String where) {
    Instant at;
    try {
      at =
          text.length() == 10
              ? java.time.LocalDate.parse(text).atStartOfDay(ZoneOffset.UTC).toInstant()
              : java.time.OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      throw invalid(
          "The Date of "
              + where
              + " is '"
              + text
              + "', not an ISO 8601 date such as 2027-01-01T00:00:00.000Z");
    }
    if (at.atOffset(ZoneOffset.UTC).toLocalTime().toNanoOfDay() != 0) {
      throw invalid("'Date' must be at midnight GMT: the Date of " + where + " is " + text);
    }
    return at;
  }

  private static S3Exception invalid(String message) {
    return new S3Exception(S3ErrorCode.INVALID_ARGUMENT, message);
  }
}
