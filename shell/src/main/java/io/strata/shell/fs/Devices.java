package io.strata.shell.fs;

/**
 * Device numbers as Linux encodes them in {@code st_rdev} (glibc's makedev: the major number in
 * bits 8-19 and 32-63, the minor in bits 0-7 and 20-31), shown as {@code major,minor} like {@code
 * ls -l} shows them.
 */
final class Devices {
  private Devices() {}

  static long major(long rdev) {
    return ((rdev >>> 8) & 0xfffL) | ((rdev >>> 32) & ~0xfffL);
  }

  static long minor(long rdev) {
    return (rdev & 0xffL) | ((rdev >>> 12) & ~0xffL);
  }

  static String text(long rdev) {
    return major(rdev) + "," + minor(rdev);
  }
}
