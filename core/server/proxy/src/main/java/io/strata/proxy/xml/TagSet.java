package io.strata.proxy.xml;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * An object's tags, in the order given. Every instance obeys S3's object tag rules: at most 10
 * tags, keys of 1 to 128 Unicode characters, values of at most 256, no key twice; breaking one is
 * an {@code InvalidTag} error with S3's message. The same set reads from and writes to the {@code
 * x-amz-tagging} header form ({@code k1=v1&k2=v2}, URL query encoding), which is also how it is
 * stored as one string.
 */
public record TagSet(List<Tag> tags) {
  public static final int MAX_TAGS = 10;
  public static final int MAX_KEY_LENGTH = 128;
  public static final int MAX_VALUE_LENGTH = 256;

  private static final String HEADER_MESSAGE =
      "The header 'x-amz-tagging' shall be encoded as "
          + "UTF-8 then URLEncoded URL query parameters without tag name duplicates.";

  /** A tag; the value may be empty. */
  public record Tag(String key, String value) {
    public Tag {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(value, "value");
    }
  }

  /**
   * @throws S3Exception InvalidTag (code {@link S3ErrorCode#INVALID_TAG}) when a rule is broken
   */
  public TagSet {
    tags = List.copyOf(tags);
    check(tags, MAX_TAGS, "Object");
  }

  /**
   * Checks S3's tag rules, shared by object and bucket tags: at most {@code maxTags} tags, the key
   * and value lengths, no key twice.
   *
   * @param owner what the tags are on, "Object" or "Bucket", as the count's message names it
   * @throws S3Exception InvalidTag when a rule is broken
   */
  static void check(List<Tag> tags, int maxTags, String owner) {
    if (tags.size() > maxTags) {
      throw new S3Exception(
          S3ErrorCode.INVALID_TAG, owner + " tags cannot be greater than " + maxTags);
    }
    Set<String> keys = new HashSet<>();
    for (Tag tag : tags) {
      int keyLength = tag.key().codePointCount(0, tag.key().length());
      if (keyLength < 1 || keyLength > MAX_KEY_LENGTH) {
        throw new S3Exception(
            S3ErrorCode.INVALID_TAG,
            "The TagKey you have provided is "
                + "invalid: a tag key is 1 to "
                + MAX_KEY_LENGTH
                + " characters, this one is "
                + keyLength
                + ".");
      }
      int valueLength = tag.value().codePointCount(0, tag.value().length());
      if (valueLength > MAX_VALUE_LENGTH) {
        throw new S3Exception(
            S3ErrorCode.INVALID_TAG,
            "The TagValue you have provided is "
                + "invalid: a tag value is at most "
                + MAX_VALUE_LENGTH
                + " characters, the value of "
                + "'"
                + tag.key()
                + "' is "
                + valueLength
                + ".");
      }
      if (!keys.add(tag.key())) {
        throw new S3Exception(
            S3ErrorCode.INVALID_TAG,
            "Cannot provide multiple Tags with the same key: '" + tag.key() + "'.");
      }
    }
  }

  public static TagSet empty() {
    return new TagSet(List.of());
  }

  public boolean isEmpty() {
    return tags.isEmpty();
  }

  /** The tags as an ordered map from key to value. */
  public Map<String, String> asMap() {
    Map<String, String> map = new LinkedHashMap<>();
    tags.forEach(t -> map.put(t.key(), t.value()));
    return map;
  }

  /**
   * Parses an {@code x-amz-tagging} header: {@code key=value} pairs joined by {@code &}, each side
   * URL-encoded ({@code +} and {@code %20} are spaces); a pair without {@code =} is a key with an
   * empty value. An empty or absent header is no tags.
   *
   * @throws S3Exception INVALID_ARGUMENT for malformed encoding or a key given twice (S3's message
   *     for the header), InvalidTag when a tag rule is broken
   */
  public static TagSet fromHeader(String header) {
    if (header == null || header.isEmpty()) {
      return empty();
    }
    List<Tag> tags = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    for (String pair : header.split("&", -1)) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      if (!keys.add(key)) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            HEADER_MESSAGE + " The key '" + key + "' is given twice.");
      }
      tags.add(new Tag(key, value));
    }
    return new TagSet(tags);
  }

  /**
   * The {@code x-amz-tagging} form of this set: {@link #fromHeader} gives back an equal set.
   * Everything but unreserved characters is percent-encoded, spaces as {@code %20}.
   */
  public String toHeader() {
    StringBuilder out = new StringBuilder();
    for (Tag tag : tags) {
      if (out.length() > 0) {
        out.append('&');
      }
      out.append(KeyEncoding.percentEncode(tag.key(), false))
          .append('=')
          .append(KeyEncoding.percentEncode(tag.value(), false));
    }
    return out.toString();
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT, HEADER_MESSAGE + " '" + s + "' is not valid URL encoding.");
    }
  }
}
