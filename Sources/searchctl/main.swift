print("searchctl")
