print("bangbang")
