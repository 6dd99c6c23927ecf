module {
  func.func public @main(%x: tensor<3xf32>) -> tensor<f32> {
    %c = stablehlo.constant dense<1.0> : tensor<f32>
    %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %m = stablehlo.multiply %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }
    return %r : tensor<f32>
  }
}
