"""What `smriti`'s exit status means: one meaning per number (DESIGN.md §9).

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
# reads it) does not exist.
DATABASE = 3
# No such user, token, space or session.
NOT_FOUND = 4
# `smriti serve` cannot listen on --host/--port (in use, or not this machine's).
ADDRESS_IN_USE = 5

HELP = f"""exit status:
  {OK}  done
  {VERIFICATION_FAILED}  verification failed (verify; import of a tampered document)
  {USAGE}  usage: a bad argument or setting, or a request refused as given
  {DATABASE}  database: it cannot be opened or written, or a reading command found none
  {NOT_FOUND}  not found: no such user, token, space or session
  {ADDRESS_IN_USE}  address in use: serve cannot listen on --host/--port

Errors are one line on stderr ("smriti: No space 99."); data goes to stdout
(--json: one JSON document; each command's --help lists its fields)."""
