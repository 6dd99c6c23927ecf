module {
  func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2xf32> {
    %z = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %0 = "stablehlo.add"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = "stablehlo.dot_general"(%0, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %2 = "stablehlo.compare"(%1, %a) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %3 = "stablehlo.select"(%2, %1, %a) : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %4 = "stablehlo.reduce"(%3, %z) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = "stablehlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%4) : (tensor<2xf32>) -> ()
  }
}
