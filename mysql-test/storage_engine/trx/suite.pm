package My::Suite::Riptide::StorageEngine;

# Overlay of MariaDB's suite/storage_engine for ENGINE=RIPTIDE (parts/ and trx/ have the
# same file). `cargo xtask mtr` links mysql-test/storage_engine to
# mysql-test/plugin/riptide/storage_engine, so mtr finds the overlays as
# storage_engine-riptide, storage_engine/parts-riptide and storage_engine/trx-riptide.
#
# Nothing here skips: suite.opt loads the plugin with --riptide=FORCE (a plugin that does not
# load stops the server, so every test fails), and define_engine.inc --die's when RIPTIDE is
# not in information_schema.ENGINES (the base suite's have_engine.inc would only skip).

@ISA = qw(My::Suite);

# `cargo xtask mtr` starts the servers with --plugin-maturity=experimental, so every server
# start logs this warning. mtr scans the error log again at the final shutdown of each worker
# with only the global suppressions; an unsuppressed line there makes the worker exit(1),
# and the manager then dies of SIGPIPE writing to it (the run ends without a summary).
push @::global_suppressions,
  qr/Plugin 'RIPTIDE' is of maturity level experimental while the server is stable/;

# xa_recovery stops the server with `--shutdown_server 0`, a kill. A kill can land while a
# WAL record is half written (a write to a file can stop between pages); the restarted
# engine then cuts the torn tail and says so. That is the expected outcome of a kill (the
# same lines mysql-test/riptide/include/killed_server_suppressions.inc suppresses), and only
# this test of the suite kills.
push @::global_suppressions,
  qr/RIPTIDE: WAL segment .*: torn tail, truncating the segment to [0-9]+ bytes/,
  qr/RIPTIDE: WAL .* had a torn tail at offset [0-9]+; recovered up to it/,
  qr/RIPTIDE: WAL segment .*: torn segment creation, rewriting an empty header/;

bless { };
