// SPDX-License-Identifier: Apache-2.0
// Private to trialstat_report: the static parts of `trialstat report`'s HTML — the charting
// library (BokehJS, embedded at build time from the bokeh package found when CMake configured,
// see cmake/bokehjs.cmake) with its licence, and the report's own script and style.
#pragma once

#include <string_view>

namespace trialstat::report::detail {

/// bokeh.min.js + bokeh-api.min.js (empty when the build found no BokehJS).
[[nodiscard]] std::string_view bokeh_js() noexcept;
/// Bokeh's LICENSE.txt (BSD-3-Clause) and version.
[[nodiscard]] std::string_view bokeh_license() noexcept;
[[nodiscard]] std::string_view bokeh_version() noexcept;
/// The report's renderer (reads the embedded JSON, draws the plots with BokehJS).
[[nodiscard]] std::string_view report_js() noexcept;
[[nodiscard]] std::string_view report_css() noexcept;

}  // namespace trialstat::report::detail
