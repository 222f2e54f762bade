"""Who is asking and what they hold: viewer and API tokens; for admins, users and sign-in
failures."""
