print("loadtest")
