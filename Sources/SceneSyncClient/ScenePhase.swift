// `ScenePhase` lives in SceneSyncCore, where the daemon keeps it with each scene; re-exported so that an app that
// imports only this library still names it (`ScenePhase.background`).
@_exported public import enum SceneSyncCore.ScenePhase
