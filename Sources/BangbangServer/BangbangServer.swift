// BangbangServer: the composition root.
