//! The oltplab SQLite VFS.
