/// What the app tells the SDK about a model it tried to use: the outcome only the app knows.
public enum ModelOutcome: Sendable, Equatable {
    /// The app loaded the model and it works (it compiled, its first prediction passed the app's
    /// checks…).
    case loaded
    /// The model does not work on this device. `reason` is sent to the server bounded: at most
    /// 200 bytes of UTF-8, control and format characters replaced, words holding a path replaced by
    /// `<path>`, long token-like strings by `<redacted>`. Do not put personal data in it.
    case failed(reason: String)
}
