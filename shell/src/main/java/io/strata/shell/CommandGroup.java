package io.strata.shell;

import java.util.List;

/**
 * A command whose work is done by its subcommands ({@code strata fs}, {@code strata fsadmin
 * journal}). Its subcommands are listed here rather than in its {@code @Command} annotation, so
 * that {@link CommandTree} builds only the branch a command line names: picocli builds the model of
 * every command it is given by reflection, which cost a one-shot command a good part of its
 * start-up when it was given all of them.
 */
public interface CommandGroup {
  /** The subcommands, in the order help lists them. */
  List<Class<?>> subcommands();
}
