print("scenesync")
