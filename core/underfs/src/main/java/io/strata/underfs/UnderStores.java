package io.strata.underfs;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Opens under stores by URI scheme and shares one open store per (scheme, authority, options), so
 * that every mount or read of the same store reuses its connections.
 */
public final class UnderStores implements AutoCloseable {
  private final Map<String, UnderFileSystemProvider> providers = new HashMap<>();
  private final Map<String, UnderFileSystem> open = new ConcurrentHashMap<>();

  public UnderStores() {
    for (UnderFileSystemProvider p :
        ServiceLoader.load(UnderFileSystemProvider.class, UnderStores.class.getClassLoader())) {
      providers.put(p.scheme(), p);
    }
  }

  /** The store for a URI; mount options configure it (credentials, endpoints). */
  public UnderFileSystem get(String uri, Map<String, String> options) throws IOException {
    Location parsed = parse(uri);
    String scheme = parsed.scheme();
    UnderFileSystemProvider provider = providers.get(scheme);
    if (provider == null) {
      throw new IllegalArgumentException(
          "No under store for scheme '"
              + scheme
              + "' in "
              + uri
              + "; supported schemes: "
              + providers.keySet());
    }
    String key = scheme + "://" + parsed.authority() + " " + new TreeMap<>(options);
    UnderFileSystem ufs = open.get(key);
    if (ufs == null) {
      synchronized (this) {
        ufs = open.get(key);
        if (ufs == null) {
          ufs = provider.open(uri, options);
          open.put(key, ufs);
        }
      }
    }
    return ufs;
  }

  /** The store for a URI with no mount options. */
  public UnderFileSystem get(String uri) throws IOException {
    return get(uri, Map.of());
  }

  /** The scheme and authority of an under-store URI. */
  record Location(String scheme, String authority) {}

  /**
   * Splits {@code scheme://authority/path}. Under-store URIs carry namespace names verbatim
   * (spaces, '#', '%', '[' are legal in file and object names), so they are not {@link
   * java.net.URI}s and are not parsed as such.
   */
  static Location parse(String uri) {
    int sep = uri.indexOf("://");
    if (sep <= 0) {
      throw new IllegalArgumentException(
          "Under-store URI has no scheme: "
              + uri
              + " (expected a form such as file:///data or s3://bucket/prefix)");
    }
    String scheme = uri.substring(0, sep);
    for (char c : scheme.toCharArray()) {
      if (!(Character.isLetterOrDigit(c) || c == '+' || c == '-' || c == '.')) {
        throw new IllegalArgumentException(
            "Not a valid under-store URI scheme '"
                + scheme
                + "' in "
                + uri
                + " (expected a form such as file:///data or s3://bucket/prefix)");
      }
    }
    String rest = uri.substring(sep + 3);
    int slash = rest.indexOf('/');
    return new Location(
        scheme.toLowerCase(java.util.Locale.ROOT), slash < 0 ? rest : rest.substring(0, slash));
  }

  /**
   * Joins an under-store directory URI and a relative path of '/'-separated names. Names are kept
   * verbatim: callers pass namespace names, which are already validated.
   */
  public static String join(String dirUri, String relative) {
    if (relative.isEmpty()) {
      return dirUri;
    }
    return dirUri.endsWith("/") ? dirUri + relative : dirUri + "/" + relative;
  }

  @Override
  public void close() throws IOException {
    for (UnderFileSystem ufs : open.values()) {
      ufs.close();
    }
    open.clear();
  }
}
