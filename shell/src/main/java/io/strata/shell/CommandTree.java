package io.strata.shell;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Builds the picocli commands a command line needs: along the words it names ({@code strata fs
 * stat} builds the root, {@code fs} and {@code stat}), and where a word names no subcommand of a
 * group (none given, {@code --help}, a typing mistake) every subcommand of that group, so that its
 * usage, its error and its suggestions are what the whole tree would give. Group commands take no
 * options with values, so the first argument that is not an option is the next word.
 */
final class CommandTree {
  private CommandTree() {}

  static CommandLine branch(Object command, CommandLine.IFactory factory, List<String> args)
      throws Exception {
    CommandLine line = new CommandLine(command, factory);
    if (!(command instanceof CommandGroup group)) {
      return line;
    }
    int word = 0;
    while (word < args.size() && args.get(word).startsWith("-")) {
      word++;
    }
    Class<?> named = word < args.size() ? named(group, args.get(word)) : null;
    if (named != null) {
      line.addSubcommand(
          branch(factory.create(named), factory, args.subList(word + 1, args.size())));
    } else {
      for (Class<?> sub : group.subcommands()) {
        line.addSubcommand(new CommandLine(factory.create(sub), factory));
      }
    }
    return line;
  }

  private static Class<?> named(CommandGroup group, String word) {
    for (Class<?> sub : group.subcommands()) {
      Command c = sub.getAnnotation(Command.class);
      if (c.name().equals(word) || List.of(c.aliases()).contains(word)) {
        return sub;
      }
    }
    return null;
  }
}
