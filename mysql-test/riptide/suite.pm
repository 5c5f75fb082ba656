package My::Suite::Riptide;

# Riptide's own mtr suite. `cargo xtask mtr` links this folder to
# mysql-test/plugin/riptide/riptide and starts mtr with --mysqld=--plugin-dir=<target/plugin>.
# Nothing here skips: suite.opt loads the plugin with --riptide=FORCE, so a plugin that does
# not load makes the server (and every test) fail instead of being skipped.

@ISA = qw(My::Suite);

bless { };
