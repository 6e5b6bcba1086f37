/// What the app tells the SDK about a model it tried to use: the outcome only the app knows.
public enum ModelOutcome: Sendable, Equatable {
    /// The app loaded the model and it works (it compiled, its first prediction passed the app's
    /// checks…).
    case loaded
    /// The model does not work on this device. `reason` is sent to the server after
    /// ``ReportReason`` bounds it: at most 200 bytes, no control characters, no paths or
    /// secret-looking strings. Do not put personal data in it.
    case failed(reason: String)
}
