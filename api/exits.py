"""What `smriti`'s exit status means: one meaning per number (docs/architecture.md#exit-statuses).

Every command ends with one of these, and scripts may branch on them:
`smriti --help` prints HELP, and the README's table repeats it.
"""

from __future__ import annotations

OK = 0
# `smriti verify` found a checkpoint that does not verify; `smriti import`
# refused a document whose hashes do not match its content.
VERIFICATION_FAILED = 1
# A bad argument, option or SMRITI_* setting, or a request refused as given
# (a password too short, the last admin disabled): nothing was changed.
USAGE = 2
# The database cannot be opened, read or written, or (for a command that only
# reads it) does not exist; with --url, the server cannot be reached.
DATABASE = 3
# No such user, token, space, session, checkpoint or branch.
NOT_FOUND = 4
# `smriti serve` cannot listen on --host/--port (in use, or not this machine's).
ADDRESS_IN_USE = 5
# Not allowed: a server (--url) that wants a token got none or a wrong,
# expired or revoked one, or the token or user may not do this (a read-only
# token's write, a viewer's). Nothing was changed.
REFUSED = 6
# `smriti merge` met conflicts it was not told how to resolve (--resolve):
# nothing was merged; `merge --dry-run` lists them.
CONFLICT = 7

HELP = f"""exit status:
  {OK}  done
  {VERIFICATION_FAILED}  verification failed (verify; import of a tampered document)
  {USAGE}  usage: a bad argument or setting, or a request refused as given
  {DATABASE}  database: it cannot be opened or written, none to read (--url: no server)
  {NOT_FOUND}  not found: no such user, token, space, session, checkpoint or branch
  {ADDRESS_IN_USE}  address in use: serve cannot listen on --host/--port
  {REFUSED}  refused: no or a wrong token (--url), or not allowed (a read-only token's write)
  {CONFLICT}  conflict: merge met conflicts not resolved with --resolve (see merge --dry-run)

Errors are one line on stderr ("smriti: No space 99."); data goes to stdout
(--json: one JSON document; each command's --help lists its fields)."""
