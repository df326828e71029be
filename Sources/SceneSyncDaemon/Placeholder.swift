public import SceneSyncCore
