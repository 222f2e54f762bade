"""The use cases: the one door from GraphQL, HTTP and the command line to the store.

Every use case is a function here that takes the ``Actor`` first (who, with
which token and scope, admin or not: ``api.domain.accounts.Actor``) and asks
``api.services.policy`` for its operation's rule when it runs; ``access``
applies the parts of the rule that need a read (the actor's role in a space,
the session's author, the models they may use). Writes are recorded as the
actor's (``Actor.authorship``). ``tests/test_layers.py`` checks that nothing
outside ``api.services`` and ``api.store`` imports the store.

    policy        what each operation needs (the one table)
    access        the reads that apply it
    spaces        create, update, delete       sessions      create, attach, mount, fork, …
    checkpoints   save, draft, compare
    chat          sendMessage                  streaming     messageStream
    continuation  continueReply, continueReplyStream
    merging       previewMerge, merge          members       a space's members
    search        search                       transfer      verify, export, import
    model_access  providers, setModelAccess    accounts      tokens, sign-in, actors
    reading       the DataLoaders' and nested fields' reads

Operator functions (``operator``) are the exception: the command line and
start-up act as nobody in particular (migrating the database, `smriti users
add`, which user `smriti export --user NAME` acts as). They take no actor,
and are not reachable from GraphQL or HTTP; a data command resolves its actor
there and then goes through the actor's use cases like a request.
"""
