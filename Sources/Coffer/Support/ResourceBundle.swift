import Foundation

/// The SDK's resource bundle (its privacy manifest), for the tests that check it ships.
package var sdkResourceBundle: Bundle { .module }
