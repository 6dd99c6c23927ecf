func.func @main(%x: tensor<2x3xf32>, %i: tensor<3xi32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.broadcast_in_dim %i, dims = [0] : (tensor<3xi32>) -> tensor<3x2xi32>
  %2 = stablehlo.convert %1 : (tensor<3x2xi32>) -> tensor<3x2xf32>
  %c = stablehlo.constant dense<[[1.0, 2.0], [3.0, -4.5e+1], [0x7FC00000, 5.0]]> : tensor<3x2xf32>
  %3 = stablehlo.pad %2, %c0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %4 = stablehlo.select %p, %0, %3 : tensor<3x2xi1>, tensor<3x2xf32>
  %5 = "stablehlo.reduce_window"(%4, %c0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%m) : (tensor<f32>) -> ()
  }) {window_dimensions = array<i64: 1, 1>} : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %6 = stablehlo.reshape %5 : (tensor<3x2xf32>) -> tensor<6xf32>
  %7 = stablehlo.concatenate %6, %6, dim = 0 : (tensor<6xf32>, tensor<6xf32>) -> tensor<12xf32>
  %8 = stablehlo.reverse %x, dims = [0] : tensor<2x3xf32>
  %9 = call @f(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %9 : tensor<3x2xf32>
}
func.func private @f(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.tanh %a : tensor<3x2xf32>
  %1 = chlo.erf %0 : tensor<3x2xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
