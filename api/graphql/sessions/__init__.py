"""Sessions: the Session type with its turns and mount; sessions and session;
create, update, attach and detach a space, mount and unmount a checkpoint, fork, delete."""
