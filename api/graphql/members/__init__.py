"""The members of a space and who wrote what: SpaceMember, Author;
add, update and remove members."""
