// Journal: journal segments, group commit, snapshots, recovery. Opaque bytes, no domain types.
