print("scenesyncd")
