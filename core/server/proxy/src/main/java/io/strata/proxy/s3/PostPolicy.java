package io.strata.proxy.s3;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The policy of a browser POST upload (POST Object): a base64 JSON document with an {@code
 * expiration} and the {@code conditions} the form must meet, as S3 defines it. A condition is an
 * exact match ({@code {"field": "value"}} or {@code ["eq", "$field", "value"]}), a prefix ({@code
 * ["starts-with", "$field", "prefix"]}, an empty prefix allowing any value) or the file's length
 * ({@code ["content-length-range", min, max]}). Field names compare without regard to case; values
 * exactly. As in S3, every field of the form must be named by some condition, but for {@code
 * policy}, the signature fields and those starting with {@code x-ignore-}; {@code bucket} is the
 * bucket the request is sent to.
 *
 * @param expiration when the policy stops allowing uploads
 * @param conditions in the policy's order
 */
record PostPolicy(Instant expiration, List<Condition> conditions) {
  /** The form fields no condition needs to name. */
  static final Set<String> UNCHECKED_FIELDS =
      Set.of("policy", "x-amz-signature", "signature", "awsaccesskeyid", "file");

  /** The prefix of form fields S3 ignores, which no condition needs to name. */
  static final String IGNORED_PREFIX = "x-ignore-";

  /** One condition of the policy. */
  sealed interface Condition permits Eq, StartsWith, LengthRange {
    /** The condition as the policy wrote it, for error messages. */
    String text();
  }

  /**
   * @param field in lower case, without the {@code $}
   */
  record Eq(String field, String value, String text) implements Condition {}

  /**
   * @param field in lower case, without the {@code $}
   */
  record StartsWith(String field, String prefix, String text) implements Condition {}

  record LengthRange(long min, long max, String text) implements Condition {}

  PostPolicy {
    conditions = List.copyOf(conditions);
  }

  /**
   * Reads a policy from its base64 form.
   *
   * @throws S3Exception InvalidPolicyDocument naming what is wrong with it
   */
  static PostPolicy parse(String base64) {
    byte[] json;
    try {
      json = Base64.getMimeDecoder().decode(base64.trim());
    } catch (IllegalArgumentException e) {
      throw invalid("Invalid Policy: Invalid base64 encoding: " + e.getMessage());
    }
    JsonElement root;
    try {
      root = JsonParser.parseString(new String(json, StandardCharsets.UTF_8));
    } catch (JsonParseException e) {
      throw invalid("Invalid Policy: Invalid JSON: " + e.getMessage());
    }
    if (!root.isJsonObject()) {
      throw invalid("Invalid Policy: the policy is not a JSON object");
    }
    JsonObject o = root.getAsJsonObject();
    JsonElement exp = o.get("expiration");
    if (exp == null) {
      throw invalid("Invalid Policy: Policy missing expiration.");
    }
    Instant expiration = expiration(exp);
    JsonElement conds = o.get("conditions");
    if (conds == null) {
      throw invalid("Invalid Policy: Policy missing conditions.");
    }
    if (!conds.isJsonArray()) {
      throw invalid("Invalid Policy: conditions is not a JSON array.");
    }
    List<Condition> out = new ArrayList<>();
    for (JsonElement c : conds.getAsJsonArray()) {
      readCondition(c, out);
    }
    return new PostPolicy(expiration, out);
  }

  private static Instant expiration(JsonElement e) {
    String text = e.isJsonPrimitive() && e.getAsJsonPrimitive().isString() ? e.getAsString() : null;
    if (text != null) {
      try {
        return OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
      } catch (DateTimeException ignored) {
        // Answered below.
      }
    }
    throw invalid(
        "Invalid Policy: Invalid 'expiration' value: '"
            + (text == null ? e.toString() : text)
            + "'; give an ISO 8601 time such as 2030-01-01T12:00:00.000Z");
  }

  private static void readCondition(JsonElement c, List<Condition> out) {
    if (c.isJsonObject()) {
      for (Map.Entry<String, JsonElement> e : c.getAsJsonObject().entrySet()) {
        String text = "{\"" + e.getKey() + "\": " + e.getValue() + "}";
        out.add(new Eq(fieldName(e.getKey()), scalar(e.getValue(), text), text));
      }
      return;
    }
    if (!c.isJsonArray()) {
      throw invalid("Invalid Policy: Invalid Condition: " + c);
    }
    JsonArray a = c.getAsJsonArray();
    String text = render(a);
    if (a.size() != 3) {
      throw invalid("Invalid Policy: Invalid Condition: " + text + " does not have three elements");
    }
    String op = scalar(a.get(0), text).toLowerCase(Locale.ROOT);
    switch (op) {
      case "eq", "starts-with" -> {
        String name = scalar(a.get(1), text);
        if (!name.startsWith("$")) {
          throw invalid(
              "Invalid Policy: Invalid Condition: " + text + ": the field must start with '$'");
        }
        String field = fieldName(name.substring(1));
        String value = scalar(a.get(2), text);
        out.add(op.equals("eq") ? new Eq(field, value, text) : new StartsWith(field, value, text));
      }
      case "content-length-range" -> {
        long min = number(a.get(1), text);
        long max = number(a.get(2), text);
        if (min < 0 || max < min) {
          throw invalid(
              "Invalid Policy: Invalid content-length-range "
                  + text
                  + ": give 0 <= minimum <= maximum");
        }
        out.add(new LengthRange(min, max, text));
      }
      default ->
          throw invalid(
              "Invalid Policy: Invalid Condition: " + text + ": unknown operator '" + op + "'");
    }
  }

  private static String fieldName(String name) {
    return name.toLowerCase(Locale.ROOT);
  }

  private static String scalar(JsonElement e, String text) {
    if (e.isJsonPrimitive()) {
      return e.getAsString();
    }
    throw invalid("Invalid Policy: Invalid Condition: " + text + ": " + e + " is not a value");
  }

  private static long number(JsonElement e, String text) {
    if (e.isJsonPrimitive()) {
      try {
        return Long.parseLong(e.getAsString().trim());
      } catch (NumberFormatException ignored) {
        // Answered below.
      }
    }
    throw invalid(
        "Invalid Policy: Invalid content-length-range " + text + ": " + e + " is not a length");
  }

  /** An array condition as S3 quotes it in its messages: {@code ["eq", "$key", "a"]}. */
  private static String render(JsonArray a) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < a.size(); i++) {
      if (i > 0) {
        b.append(", ");
      }
      JsonElement e = a.get(i);
      b.append(
          e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()
              ? e.getAsString()
              : new JsonPrimitive(e.isJsonPrimitive() ? e.getAsString() : e.toString()).toString());
    }
    return b.append(']').toString();
  }

  /**
   * Fails unless the policy is still valid at {@code now}.
   *
   * @throws S3Exception AccessDenied "Policy expired."
   */
  void checkExpiration(Instant now) {
    if (!now.isBefore(expiration)) {
      throw denied("Policy expired.");
    }
  }

  /**
   * Checks the form's fields against the conditions, and that each field is named by one.
   *
   * @param fields the form's fields before its file, names in lower case, {@code ${filename}}
   *     replaced; the request's bucket as {@code bucket}
   * @throws S3Exception AccessDenied naming the first condition that fails, or the fields no
   *     condition names
   */
  void checkFields(Map<String, String> fields) {
    Set<String> named = new HashSet<>();
    for (Condition c : conditions) {
      if (c instanceof Eq eq) {
        named.add(eq.field());
        if (!fields.getOrDefault(eq.field(), "").equals(eq.value())) {
          throw failed(c);
        }
      } else if (c instanceof StartsWith sw) {
        named.add(sw.field());
        if (!fields.getOrDefault(sw.field(), "").startsWith(sw.prefix())) {
          throw failed(c);
        }
      }
      // A content-length-range is checked against the file as it arrives (lengthRange).
    }
    List<String> extra = new ArrayList<>();
    for (String name : fields.keySet()) {
      if (!named.contains(name)
          && !name.equals("bucket")
          && !UNCHECKED_FIELDS.contains(name)
          && !name.startsWith(IGNORED_PREFIX)) {
        extra.add(name);
      }
    }
    if (!extra.isEmpty()) {
      throw denied("Extra input fields: " + String.join(", ", extra));
    }
  }

  /**
   * The lengths the file may have: the intersection of the policy's content-length-range
   * conditions; null when it has none.
   */
  LengthRange lengthRange() {
    LengthRange range = null;
    for (Condition c : conditions) {
      if (c instanceof LengthRange lr) {
        if (range == null) {
          range = lr;
        } else {
          long min = Math.max(range.min(), lr.min());
          long max = Math.min(range.max(), lr.max());
          range = new LengthRange(min, max, range.text() + ", " + lr.text());
        }
      }
    }
    return range;
  }

  static S3Exception failed(Condition c) {
    return denied("Policy Condition failed: " + c.text());
  }

  static S3Exception denied(String why) {
    return new S3Exception(S3ErrorCode.ACCESS_DENIED, "Invalid according to Policy: " + why);
  }

  private static S3Exception invalid(String message) {
    return new S3Exception(S3ErrorCode.INVALID_POLICY_DOCUMENT, message);
  }
}
