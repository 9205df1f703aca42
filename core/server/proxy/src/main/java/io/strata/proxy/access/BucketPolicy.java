package io.strata.proxy.access;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A bucket policy: the subset of S3's policy language that Strata evaluates, parsed once and
 * checked against each request. Statements have an {@code Effect} (Allow or Deny), a {@code
 * Principal} ({@code "*"}, or {@code {"AWS": [...]}} naming Strata users, bare or as the last part
 * of an IAM user ARN), {@code Action} (s3 actions, with {@code *} and {@code ?} wildcards), {@code
 * Resource} ({@code arn:aws:s3:::bucket} and {@code arn:aws:s3:::bucket/key}, with wildcards), and
 * an optional {@code Condition} on {@code s3:prefix}, {@code aws:username}, {@code aws:SourceIp}
 * and {@code aws:SecureTransport}.
 *
 * <p>Anything else (NotPrincipal, NotAction, NotResource, another condition key or operator) is
 * refused when the policy is set, naming what is not supported: a policy whose statement Strata
 * skipped could allow or deny what its author did not mean.
 */
public final class BucketPolicy {
  /** What a policy says about a request. */
  public enum Decision {
    /** A statement denies it: refused, whatever the modes and ACLs allow. */
    DENY,
    /** A statement allows it and none denies it: granted, whatever the modes say. */
    ALLOW,
    /** No statement applies: the modes and ACLs decide. */
    NONE
  }

  /**
   * What a request asks, as a policy sees it.
   *
   * @param user the Strata user, or null for a request without a signature
   * @param action the s3 action, such as {@code s3:GetObject}
   * @param resource the ARN of the bucket or object
   * @param prefix the listing's prefix ({@code s3:prefix}), or null when not a listing
   * @param sourceIp the client's address
   * @param secureTransport whether the request came over TLS
   */
  public record Request(
      String user,
      String action,
      String resource,
      String prefix,
      InetAddress sourceIp,
      boolean secureTransport) {}

  private static final Set<String> OPERATORS =
      Set.of(
          "StringEquals",
          "StringNotEquals",
          "StringLike",
          "StringNotLike",
          "IpAddress",
          "NotIpAddress",
          "Bool");
  private static final Set<String> CONDITION_KEYS =
      Set.of("s3:prefix", "aws:username", "aws:sourceip", "aws:securetransport");

  private final List<Statement> statements;

  private BucketPolicy(List<Statement> statements) {
    this.statements = List.copyOf(statements);
  }

  /**
   * Parses a policy document.
   *
   * @param bucket the bucket it is for: every resource must be in it
   * @throws S3Exception MalformedPolicy naming what is wrong or not supported
   */
  public static BucketPolicy parse(String json, String bucket) {
    JsonObject root;
    try {
      JsonElement e = JsonParser.parseString(json);
      if (!e.isJsonObject()) {
        throw malformed("a policy is a JSON object with a Statement list");
      }
      root = e.getAsJsonObject();
    } catch (JsonParseException e) {
      throw malformed("the policy is not valid JSON: " + e.getMessage());
    }
    JsonElement statementsJson = root.get("Statement");
    if (statementsJson == null) {
      throw malformed("the policy has no Statement");
    }
    List<Statement> statements = new ArrayList<>();
    for (JsonElement s : list(statementsJson)) {
      if (!s.isJsonObject()) {
        throw malformed("each Statement is a JSON object");
      }
      statements.add(Statement.parse(s.getAsJsonObject(), bucket));
    }
    if (statements.isEmpty()) {
      throw malformed("the policy has no Statement");
    }
    return new BucketPolicy(statements);
  }

  /** What the policy says about {@code r}: a deny wins over any allow. */
  public Decision decide(Request r) {
    Decision d = Decision.NONE;
    for (Statement s : statements) {
      if (s.applies(r)) {
        if (!s.allow) {
          return Decision.DENY;
        }
        d = Decision.ALLOW;
      }
    }
    return d;
  }

  /** The Sid of the first statement that denies {@code r}, or "" when it has none. */
  public String denyingStatement(Request r) {
    for (Statement s : statements) {
      if (!s.allow && s.applies(r)) {
        return s.sid;
      }
    }
    return "";
  }

  /**
   * The Sid of a statement that would deny {@code r} for some resource of the bucket, or null when
   * none would: for requests whose objects are not known before they are served (DeleteObjects).
   */
  public String mayDenySomewhere(Request r) {
    for (Statement s : statements) {
      if (!s.allow && s.appliesToSomeResource(r)) {
        return s.sid;
      }
    }
    return null;
  }

  private record Condition(String operator, String key, List<String> values) {
    boolean holds(Request r) {
      String actual =
          switch (key) {
            case "s3:prefix" -> r.prefix();
            case "aws:username" -> r.user();
            case "aws:sourceip" -> r.sourceIp() == null ? null : r.sourceIp().getHostAddress();
            default -> Boolean.toString(r.secureTransport());
          };
      switch (operator) {
        case "StringEquals":
          return actual != null && values.contains(actual);
        case "StringNotEquals":
          return actual == null || !values.contains(actual);
        case "StringLike":
          return actual != null && values.stream().anyMatch(v -> Wildcards.matches(v, actual));
        case "StringNotLike":
          return actual == null || values.stream().noneMatch(v -> Wildcards.matches(v, actual));
        case "IpAddress":
          return r.sourceIp() != null && values.stream().anyMatch(v -> inCidr(v, r.sourceIp()));
        case "NotIpAddress":
          return r.sourceIp() == null || values.stream().noneMatch(v -> inCidr(v, r.sourceIp()));
        default: // Bool
          return values.stream().anyMatch(v -> v.equalsIgnoreCase(actual));
      }
    }
  }

  private static final class Statement {
    final String sid;
    final boolean allow;
    final boolean anyPrincipal;
    final Set<String> users;
    final List<String> actions;
    final List<String> resources;
    final List<Condition> conditions;

    private Statement(
        String sid,
        boolean allow,
        boolean anyPrincipal,
        Set<String> users,
        List<String> actions,
        List<String> resources,
        List<Condition> conditions) {
      this.sid = sid;
      this.allow = allow;
      this.anyPrincipal = anyPrincipal;
      this.users = users;
      this.actions = actions;
      this.resources = resources;
      this.conditions = conditions;
    }

    static Statement parse(JsonObject s, String bucket) {
      String sid = s.has("Sid") ? s.get("Sid").getAsString() : "";
      for (String unsupported : List.of("NotPrincipal", "NotAction", "NotResource")) {
        if (s.has(unsupported)) {
          throw malformed(
              unsupported + " is not supported by Strata: name what the statement is for");
        }
      }
      String effect = s.has("Effect") ? s.get("Effect").getAsString() : "";
      if (!effect.equals("Allow") && !effect.equals("Deny")) {
        throw malformed("statement '" + sid + "' needs Effect Allow or Deny");
      }
      JsonElement principal = s.get("Principal");
      if (principal == null) {
        throw malformed("statement '" + sid + "' names no Principal");
      }
      boolean any = false;
      Set<String> users = new java.util.HashSet<>();
      if (principal.isJsonPrimitive()) {
        if (!principal.getAsString().equals("*")) {
          throw malformed("Principal is \"*\" or {\"AWS\": [...]}");
        }
        any = true;
      } else if (principal.isJsonObject() && principal.getAsJsonObject().has("AWS")) {
        for (String p : strings(principal.getAsJsonObject().get("AWS"), "Principal")) {
          if (p.equals("*")) {
            any = true;
          } else {
            users.add(userOf(p));
          }
        }
      } else {
        throw malformed("Principal is \"*\" or {\"AWS\": [...]} naming Strata users");
      }
      List<String> actions = new ArrayList<>();
      for (String a : strings(required(s, "Action", sid), "Action")) {
        if (!a.equals("*") && !a.toLowerCase(Locale.ROOT).startsWith("s3:")) {
          throw malformed("action '" + a + "' is not an s3 action");
        }
        actions.add(a.toLowerCase(Locale.ROOT));
      }
      List<String> resources = new ArrayList<>();
      for (String res : strings(required(s, "Resource", sid), "Resource")) {
        String prefix = "arn:aws:s3:::";
        String rest = res.startsWith(prefix) ? res.substring(prefix.length()) : null;
        String inBucket = rest == null ? null : rest.split("/", 2)[0];
        if (rest == null || !(inBucket.equals(bucket) || Wildcards.matches(inBucket, bucket))) {
          throw malformed(
              "resource '" + res + "' is not in this bucket: use arn:aws:s3:::" + bucket + "/...");
        }
        resources.add(res);
      }
      List<Condition> conditions = new ArrayList<>();
      JsonElement c = s.get("Condition");
      if (c != null) {
        if (!c.isJsonObject()) {
          throw malformed("Condition is an object of operators");
        }
        for (Map.Entry<String, JsonElement> op : c.getAsJsonObject().entrySet()) {
          if (!OPERATORS.contains(op.getKey())) {
            throw malformed(
                "the condition operator '"
                    + op.getKey()
                    + "' is not supported by Strata: use one of "
                    + OPERATORS);
          }
          if (!op.getValue().isJsonObject()) {
            throw malformed("condition " + op.getKey() + " maps keys to values");
          }
          for (Map.Entry<String, JsonElement> kv : op.getValue().getAsJsonObject().entrySet()) {
            String key = kv.getKey().toLowerCase(Locale.ROOT);
            if (!CONDITION_KEYS.contains(key)) {
              throw malformed(
                  "the condition key '"
                      + kv.getKey()
                      + "' is not supported by Strata: use s3:prefix, aws:username, aws:SourceIp"
                      + " or aws:SecureTransport");
            }
            List<String> values = strings(kv.getValue(), kv.getKey());
            if (op.getKey().endsWith("IpAddress")) {
              values.forEach(BucketPolicy::checkCidr);
            }
            conditions.add(new Condition(op.getKey(), key, values));
          }
        }
      }
      return new Statement(
          sid, effect.equals("Allow"), any, Set.copyOf(users), actions, resources, conditions);
    }

    boolean applies(Request r) {
      return appliesToSomeResource(r)
          && resources.stream().anyMatch(res -> Wildcards.matches(res, r.resource()));
    }

    boolean appliesToSomeResource(Request r) {
      if (!anyPrincipal && (r.user() == null || !users.contains(r.user()))) {
        return false;
      }
      String action = r.action().toLowerCase(Locale.ROOT);
      if (actions.stream().noneMatch(a -> Wildcards.matches(a, action))) {
        return false;
      }
      return conditions.stream().allMatch(c -> c.holds(r));
    }
  }

  /** The Strata user an AWS principal names: itself, or the user of an IAM user ARN. */
  private static String userOf(String principal) {
    int user = principal.lastIndexOf(":user/");
    if (user >= 0) {
      return principal.substring(user + ":user/".length());
    }
    if (principal.startsWith("arn:")) {
      throw malformed(
          "principal '"
              + principal
              + "' is not a Strata user: name the user, or arn:...:user/NAME");
    }
    return principal;
  }

  private static JsonElement required(JsonObject s, String name, String sid) {
    JsonElement e = s.get(name);
    if (e == null) {
      throw malformed("statement '" + sid + "' has no " + name);
    }
    return e;
  }

  private static List<JsonElement> list(JsonElement e) {
    List<JsonElement> out = new ArrayList<>();
    if (e.isJsonArray()) {
      JsonArray a = e.getAsJsonArray();
      a.forEach(out::add);
    } else {
      out.add(e);
    }
    return out;
  }

  private static List<String> strings(JsonElement e, String what) {
    List<String> out = new ArrayList<>();
    for (JsonElement v : list(e)) {
      if (!v.isJsonPrimitive()) {
        throw malformed(what + " takes a string or a list of strings");
      }
      out.add(v.getAsString());
    }
    return out;
  }

  private static void checkCidr(String cidr) {
    try {
      parseCidr(cidr);
    } catch (IllegalArgumentException e) {
      throw malformed("'" + cidr + "' is not an address or CIDR block: " + e.getMessage());
    }
  }

  private static boolean inCidr(String cidr, InetAddress address) {
    Object[] parsed = parseCidr(cidr);
    byte[] net = ((InetAddress) parsed[0]).getAddress();
    int bits = (Integer) parsed[1];
    byte[] a = address.getAddress();
    if (a.length != net.length) {
      return false;
    }
    for (int i = 0; i < bits; i++) {
      int mask = 0x80 >> (i % 8);
      if ((a[i / 8] & mask) != (net[i / 8] & mask)) {
        return false;
      }
    }
    return true;
  }

  /** An address block: the network's address and its prefix length. */
  private static Object[] parseCidr(String cidr) {
    int slash = cidr.indexOf('/');
    String host = slash < 0 ? cidr : cidr.substring(0, slash);
    if (!host.matches("[0-9a-fA-F:.]+")) {
      throw new IllegalArgumentException("not a literal address");
    }
    InetAddress net;
    try {
      net = InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    int max = net.getAddress().length * 8;
    int bits;
    try {
      bits = slash < 0 ? max : Integer.parseInt(cidr.substring(slash + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad prefix length", e);
    }
    if (bits < 0 || bits > max) {
      throw new IllegalArgumentException("prefix length out of range");
    }
    return new Object[] {net, bits};
  }

  private static S3Exception malformed(String detail) {
    return new S3Exception(
        S3ErrorCode.MALFORMED_POLICY, "Policy has invalid resource or syntax: " + detail);
  }
}
